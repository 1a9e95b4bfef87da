"""https:// model servers, end to end: a real TLS server on 127.0.0.1 whose certificate a
test CA signed (trustme), `agentcli run` trusting that CA as a user would (SSL_CERT_FILE,
SSL_CERT_DIR), a certificate it must refuse in one clear line, and HTTPS_PROXY / NO_PROXY
honoured through a real CONNECT proxy."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from agentcli.providers.http import light_transport, new_client
from agentcli.providers.light_http import LightTransport
from tests.conftest import RunCli, assert_one_error
from tests.connect_proxy import ConnectProxy
from tests.scripted_server import Reply, ScriptedServer
from tests.test_light_http import OK_HEAD, KeepAliveServer, chunked, pieces, post_each

NO_PROXIES = {
    name: None
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy")
}


def server_context(authority: trustme.CA, *names: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert(*names).configure_cert(context)
    return context


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def ca_file(authority: trustme.CA, tmp_path: Path) -> str:
    path = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(path))
    return str(path)


@pytest.fixture
def tls_server(authority: trustme.CA) -> Iterator[ScriptedServer]:
    with ScriptedServer(tls=server_context(authority, "127.0.0.1", "localhost")) as server:
        yield server
    assert server.errors == []


def test_a_server_whose_ca_ssl_cert_file_names_streams_the_answer(
    run_cli: RunCli, tls_server: ScriptedServer, ca_file: str
) -> None:
    assert tls_server.base_url.startswith("https://127.0.0.1:")
    tls_server.enqueue(Reply.text(["Hel", "lo ", "over ", "TLS"]))
    result = run_cli(["run", "hi"], server=tls_server, env={"SSL_CERT_FILE": ca_file})

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello over TLS\n"
    assert len(tls_server.requests) == 1


def test_a_ca_in_the_directory_ssl_cert_dir_names_is_trusted(
    run_cli: RunCli, tls_server: ScriptedServer, ca_file: str, tmp_path: Path
) -> None:
    """OpenSSL looks a CA up in that directory by its subject's hash (`openssl rehash`)."""
    openssl = shutil.which("openssl")
    assert openssl, "the openssl command names the CA's file by its hash"
    digest = subprocess.run(
        [openssl, "x509", "-hash", "-noout", "-in", ca_file],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    directory = tmp_path / "certs"
    directory.mkdir()
    shutil.copy(ca_file, directory / f"{digest}.0")
    tls_server.enqueue(Reply.text(["trusted"]))
    result = run_cli(["run", "hi"], server=tls_server, env={"SSL_CERT_DIR": str(directory)})

    assert result.returncode == 0, result.stderr
    assert result.stdout == "trusted\n"


@pytest.mark.parametrize("trusting", ["the default CAs", "another CA"])
def test_a_certificate_no_trusted_ca_signed_fails_at_once_in_one_line(
    run_cli: RunCli, tls_server: ScriptedServer, tmp_path: Path, trusting: str
) -> None:
    env = {}
    if trusting == "another CA":
        other = tmp_path / "other.pem"
        trustme.CA().cert_pem.write_to_path(str(other))
        env["SSL_CERT_FILE"] = str(other)
    tls_server.enqueue(Reply.text(["must not be read"]))
    result = run_cli(["run", "hi"], server=tls_server, env=env)

    assert result.returncode == 1
    line = assert_one_error(result, "certificate is not trusted", "SSL_CERT_FILE")
    assert tls_server.base_url in line
    assert "retry" not in result.stderr.lower()  # a refused certificate stays refused
    assert tls_server.requests == []
    assert result.stdout == ""


def test_a_certificate_for_another_name_fails_in_one_line(
    run_cli: RunCli, authority: trustme.CA, ca_file: str
) -> None:
    with ScriptedServer(tls=server_context(authority, "model.example")) as server:
        server.enqueue(Reply.text(["must not be read"]))
        result = run_cli(["run", "hi"], server=server, env={"SSL_CERT_FILE": ca_file})
        assert server.requests == []

    assert result.returncode == 1
    assert_one_error(result, "certificate is for another name", "127.0.0.1")


def test_a_plain_http_server_at_an_https_url_fails_in_one_line(
    run_cli: RunCli, server: ScriptedServer, ca_file: str
) -> None:
    url = server.base_url.replace("http://", "https://")
    result = run_cli(["run", "hi"], env={"OPENAI_BASE_URL": url, "SSL_CERT_FILE": ca_file})

    assert result.returncode == 1
    assert_one_error(result, "TLS handshake failed", "https://")


def test_a_stream_cut_over_tls_keeps_the_text_and_says_so(
    run_cli: RunCli, tls_server: ScriptedServer, ca_file: str
) -> None:
    tls_server.enqueue(Reply.cut(["Partial ", "answer"]), Reply.text(["a retry would print this"]))
    result = run_cli(["run", "hi"], server=tls_server, env={"SSL_CERT_FILE": ca_file})

    assert result.returncode == 1
    assert result.stdout.startswith("Partial answer")
    assert_one_error(result, "cut")
    assert len(tls_server.requests) == 1


@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "https_proxy", "ALL_PROXY"])
def test_a_proxy_in_the_environment_carries_the_request(
    run_cli: RunCli, tls_server: ScriptedServer, ca_file: str, variable: str
) -> None:
    tls_server.enqueue(Reply.text(["through ", "the proxy"]))
    with ConnectProxy() as proxy:
        env = {**NO_PROXIES, "SSL_CERT_FILE": ca_file, variable: proxy.url}
        result = run_cli(["run", "hi"], server=tls_server, env=env)

    assert result.returncode == 0, result.stderr
    assert result.stdout == "through the proxy\n"
    assert proxy.targets == [f"127.0.0.1:{tls_server.port}"]


def test_no_proxy_sends_the_request_around_the_proxy(
    run_cli: RunCli, tls_server: ScriptedServer, ca_file: str
) -> None:
    tls_server.enqueue(Reply.text(["direct"]))
    with ConnectProxy() as proxy:
        env = {**NO_PROXIES, "SSL_CERT_FILE": ca_file, "HTTPS_PROXY": proxy.url}
        result = run_cli(["run", "hi"], server=tls_server, env={**env, "NO_PROXY": "127.0.0.1"})

    assert result.returncode == 0, result.stderr
    assert result.stdout == "direct\n"
    assert proxy.targets == []
    assert len(tls_server.requests) == 1


def test_through_a_proxy_a_refused_certificate_is_one_line_too(
    run_cli: RunCli, tls_server: ScriptedServer
) -> None:
    with ConnectProxy() as proxy:
        result = run_cli(
            ["run", "hi"], server=tls_server, env={**NO_PROXIES, "HTTPS_PROXY": proxy.url}
        )

    assert result.returncode == 1
    assert_one_error(result, "certificate is not trusted")
    assert proxy.targets == [f"127.0.0.1:{tls_server.port}"]
    assert tls_server.requests == []


# --- the transport itself, over TLS ---


@pytest.fixture
def trusting(ca_file: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's own process trusts the test CA, as `agentcli run` does above."""
    for name in NO_PROXIES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", ca_file)


@pytest.mark.usefixtures("trusting")
def test_the_providers_client_reads_a_tls_body_a_read_at_a_time(authority: trustme.CA) -> None:
    """The mark of the light transport (httpx's own hands up one piece per HTTP chunk)."""
    server = KeepAliveServer(tls=server_context(authority, "127.0.0.1"))
    server.ANSWER = (
        OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + chunked(b"a", b"b", b"c") + b"0\r\n\r\n"
    )
    try:
        assert asyncio.run(pieces(new_client(server.url), server.url)) == [b"abc"]
    finally:
        server.stop()


@pytest.mark.usefixtures("trusting")
def test_a_tls_connection_kept_alive_carries_the_next_request(authority: trustme.CA) -> None:
    server = KeepAliveServer(tls=server_context(authority, "127.0.0.1"))
    transport = light_transport(server.url)
    assert isinstance(transport, LightTransport)
    try:
        assert asyncio.run(post_each(transport, server.url, 3)) == [b"ok"] * 3
    finally:
        server.stop()
    assert (server.connections, server.requests) == (1, 3)  # one handshake for three
