# A source folder that does not exist.
run shardpack pack missing out
