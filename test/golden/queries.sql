.headers on
.nullvalue NULL
SELECT * FROM fn_trace_events ORDER BY run_id, seq_no;
SELECT * FROM fn_trace_runs ORDER BY run_id, chunk;
SELECT * FROM fn_profile ORDER BY run_id, symbol;
SELECT * FROM fn_trace_run_summary;
SELECT * FROM fnt_heat('run-2026-12-02-0001') ORDER BY key;
