# No command: the commands, in the one-line failure form.
run shardpack
