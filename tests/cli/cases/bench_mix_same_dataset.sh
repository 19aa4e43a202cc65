# The same dataset given twice as sources of a mixture is refused, naming both.
setup pack src out --samples-per-shard 5
run shardpack bench --source out 0.7 --source ./out 0.3 --crop 16
