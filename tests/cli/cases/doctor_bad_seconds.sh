# doctor with no time to measure in.
run shardpack doctor src --seconds 0
