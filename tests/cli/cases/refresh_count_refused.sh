# A --count view after an append: refused with the command that makes it again (not the rule as
# JSON), and left as it was.
setup pack src out --samples-per-shard 5
"$shardpack" split out val train --count 3 --seed 1 >/dev/null
setup append out src
run shardpack refresh val
