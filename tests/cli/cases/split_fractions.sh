# A three-way split by the key's hash: train, val and test, together every sample, each once.
setup pack src out --samples-per-shard 5
run shardpack split out train val test --fractions 0.5,0.25,0.25 --seed 3
