"""Where a command may read, write and connect: the OS sandbox (bubblewrap, Landlock,
Seatbelt) under every command the model runs, in the profile the policy chose for it.
`process/` owns starting and stopping processes; this package owns their confinement."""
