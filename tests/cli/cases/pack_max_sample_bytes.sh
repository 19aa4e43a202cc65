# --max-sample-bytes: every file above the limit is skipped and named, the rest packed.
run shardpack pack src out --max-sample-bytes 3KB --no-sync
big=$(find src -type f -size +3000c | wc -l)
said=$(grep -c "is larger than" "$work/stderr")
[[ "$big" -gt 0 && "$said" == "$big" ]] || fail "$big files are above 3000 bytes, $said skips say so"
