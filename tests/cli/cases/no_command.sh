# No command: the usage, on stderr.
run shardpack
