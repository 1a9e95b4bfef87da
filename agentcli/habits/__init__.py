"""What a user brings from the other agent shells, read where those keep it: Agent Skills
(skills.py), custom slash commands (commands.py), and the places each is looked for
(places.py). Their files share one front matter reader (front_matter.py)."""
