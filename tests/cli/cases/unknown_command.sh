# A typo in the command: the command meant, and the list.
run shardpack pakc src out
