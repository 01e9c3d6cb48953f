SELECT count(*), sum(t_ns), min(seq_no), max(seq_no) FROM fn_trace_events;
SELECT * FROM fn_trace_runs;
SELECT * FROM fn_profile ORDER BY total_ns DESC, symbol;
SELECT * FROM fn_trace_run_summary;
SELECT * FROM fnt_heat('fuzz-run');
