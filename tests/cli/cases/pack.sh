# The main job: 12 images into shards of 5 samples, one skip reported.
run shardpack pack src out --samples-per-shard 5 --no-sync
