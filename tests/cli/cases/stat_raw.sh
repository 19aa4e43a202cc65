# stat of the raw dataset the pack_raw case writes.
setup pack src raw --format raw --resize 20 --crop 16x12 --compress zstd --chunk-samples 4
run shardpack stat raw
