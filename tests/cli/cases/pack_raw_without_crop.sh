# raw needs a fixed size or --keep-size.
run shardpack pack src out --format raw
