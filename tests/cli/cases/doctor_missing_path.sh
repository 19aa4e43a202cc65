# doctor on a path that does not exist: one clear error, nothing measured.
run shardpack doctor missing
