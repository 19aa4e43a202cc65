# pack --json: the summary for scripts (timing normalised).
run shardpack pack src out --json --no-sync --samples-per-shard 5
