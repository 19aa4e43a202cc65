# --threads out of range.
run shardpack pack src out --threads -1
