SELECT fnt_file_chunk('{"repo":"acme/fuzz","run_id":"fuzz-new","target":"t","source":"xray","chunk":0,"chunks":1,"total_events":2,"duration_ns":5,"truncated":false,"functions":[{"symbol":"f","stable_id":"s f","local":true}],"events":[[0,0,0,0,"entry"],[0,1,5,0,"exit"]]}');
SELECT fnt_file_chunk('{"repo":"other","run_id":"fuzz-run","target":"t","source":"xray","chunk":5,"chunks":6,"total_events":0,"duration_ns":0,"truncated":false,"functions":[],"events":[]}');
CREATE TABLE room(symbol, stable_id); INSERT INTO room VALUES('g','room g');
SELECT fnt_file_profile('{"run_id":"p2","repo":"acme/fuzz","target":"t","samples":1,"profile_ns":1,"rows":[{"symbol":"g","self_ns":1,"total_ns":1,"self_samples":1,"total_samples":1}]}', 'room');
SELECT fnt_file_chunk('{"repo":"acme/fuzz"', 'nosuchroom');
