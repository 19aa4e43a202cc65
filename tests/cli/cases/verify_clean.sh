# verify --decode of the dataset the pack case writes.
setup pack src out --samples-per-shard 5
run shardpack verify out --decode
