SELECT thread, seq_no, t_ns, stable_id, kind, symbol FROM fn_trace_events
 WHERE run_id = 'fuzz-run' AND t_ns BETWEEN 10 AND 100000 AND seq_no > 3
 ORDER BY seq_no LIMIT 7;
SELECT * FROM fn_trace_events WHERE run_id IN ('fuzz-run', 'nope', NULL) AND thread = 1 AND kind = 'exit' AND stable_id IS NOT NULL;
SELECT * FROM fn_trace_events WHERE repo = 'acme/fuzz' AND seq_no BETWEEN -5 AND 9223372036854775807 ORDER BY seq_no DESC;
SELECT run_id, chunk FROM fn_trace_runs WHERE chunk = 1 AND repo IN ('acme/fuzz');
SELECT fnt_last_scan();
