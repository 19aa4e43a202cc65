# A typo in a flag: the flag meant, in the one-line failure form.
run shardpack bench src --thread 2
