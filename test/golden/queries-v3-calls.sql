.headers on
.nullvalue NULL
SELECT * FROM fn_trace_calls WHERE run_id = 'run-v3-calls' ORDER BY thread, call_id;
SELECT * FROM fnt_heat('run-v3-calls') ORDER BY key;
SELECT key, sum(dur_ns*outermost), sum(self_ns), count(*) FROM fn_trace_calls WHERE run_id = 'run-v3-calls' GROUP BY key ORDER BY key;
SELECT * FROM fnt_account('run-v3-calls') ORDER BY key;
SELECT * FROM fnt_callgraph('run-v3-calls') ORDER BY caller_key, callee_key;
SELECT * FROM fnt_flame('run-v3-calls') ORDER BY stack;
SELECT * FROM fnt_flame('run-v3-calls', 3000, 9000) ORDER BY stack;
SELECT * FROM fnt_timeline('run-v3-calls', 0, 40000, 7) ORDER BY thread, depth, bucket;
