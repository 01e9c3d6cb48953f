SELECT fnt_open(:warehouse) IS NOT NULL;
SELECT fnt_file_chunk(:chunk);
SELECT fnt_file_chunk(:chunk);
SELECT thread, seq_no, t_ns, stable_id, kind, symbol FROM fn_trace_events WHERE run_id = 'run-2026-12-02-0001' AND t_ns BETWEEN 0 AND 1000000 ORDER BY seq_no LIMIT 10000;
SELECT run_id, repo, "commit", chunks_filed, chunks, events, mapped_events, binaries FROM fn_trace_run_summary;
SELECT key, inclusive_ns, self_ns, calls FROM fnt_heat('run-2026-12-02-0001') ORDER BY key;
