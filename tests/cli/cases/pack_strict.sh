# --strict: the first bad input (notes.txt) fails the pack.
run shardpack pack src strict --strict --no-sync
