# --prefix names the shards; the dataset verifies under its new names.
run shardpack pack src out --prefix part --samples-per-shard 5 --no-sync --quiet
shards=$(cd out && ls *.tar | tr "\n" " ")
[[ "$shards" == "part-000000.tar part-000001.tar part-000002.tar " ]] || fail "shards are named: $shards"
"$shardpack" verify out >/dev/null || fail "verify of the --prefix dataset failed"
