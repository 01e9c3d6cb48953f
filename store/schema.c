/*
** schema.c -- the three tables: column names, types and field ids.
** A column's field id never changes; a new column takes a new id, and files
** written before it read it as NULL (FORMAT.md, "Schema evolution").
*/
#include <string.h>

#include "internal.h"

static const fnt_colinfo eventCols[FNT_EV_NCOL] = {
  {"repo", 1, 1}, {"commit", 1, 2}, {"run_id", 1, 3}, {"thread", 0, 4},
  {"seq_no", 0, 5}, {"t_ns", 0, 6}, {"stable_id", 1, 7}, {"kind", 1, 8},
  {"symbol", 1, 9},
};

static const fnt_colinfo runCols[FNT_RUN_NCOL] = {
  {"run_id", 1, 1}, {"ts_micros", 0, 2}, {"repo", 1, 3}, {"commit", 1, 4},
  {"target", 1, 5}, {"source", 1, 6}, {"chunk", 0, 7}, {"chunks", 0, 8},
  {"events", 0, 9}, {"mapped_events", 0, 10}, {"functions", 0, 11},
  {"mapped_functions", 0, 12}, {"local_functions", 0, 13},
  {"mapped_local_functions", 0, 14}, {"threads", 0, 15}, {"first_ns", 0, 16},
  {"last_ns", 0, 17}, {"total_events", 0, 18}, {"duration_ns", 0, 19},
  {"truncated", 0, 20}, {"binaries", 1, 21},
};

static const fnt_colinfo profileCols[FNT_PROF_NCOL] = {
  {"run_id", 1, 1}, {"ts_micros", 0, 2}, {"repo", 1, 3}, {"commit", 1, 4},
  {"target", 1, 5}, {"stable_id", 1, 6}, {"symbol", 1, 7}, {"self_ns", 0, 8},
  {"total_ns", 0, 9}, {"self_samples", 0, 10}, {"total_samples", 0, 11},
  {"samples", 0, 12}, {"profile_ns", 0, 13},
};

/* Calls segments store chunks for fields 4-8, 10-12 and 15 (FORMAT.md). */
static const fnt_colinfo callCols[FNT_CALL_NCOL] = {
  {"repo", 1, 1}, {"commit", 1, 2}, {"run_id", 1, 3}, {"thread", 0, 4},
  {"call_id", 0, 5}, {"parent_id", 0, 6}, {"depth", 0, 7},
  {"start_ns", 0, 8}, {"end_ns", 0, 9}, {"dur_ns", 0, 10},
  {"self_ns", 0, 11}, {"key", 1, 12}, {"stable_id", 1, 13},
  {"symbol", 1, 14}, {"ended_by", 1, 15}, {"outermost", 0, 16},
};

const fnt_colinfo *fnt_table_cols(fnt_table t){
  switch( t ){
    case FNT_TABLE_EVENTS:  return eventCols;
    case FNT_TABLE_RUNS:    return runCols;
    case FNT_TABLE_PROFILE: return profileCols;
    case FNT_TABLE_CALLS:   return callCols;
  }
  return 0;
}

int fnt_table_ncol(fnt_table t){
  switch( t ){
    case FNT_TABLE_EVENTS:  return FNT_EV_NCOL;
    case FNT_TABLE_RUNS:    return FNT_RUN_NCOL;
    case FNT_TABLE_PROFILE: return FNT_PROF_NCOL;
    case FNT_TABLE_CALLS:   return FNT_CALL_NCOL;
  }
  return 0;
}

const char *fnt_table_name(fnt_table t){
  switch( t ){
    case FNT_TABLE_EVENTS:  return "fn_trace_events";
    case FNT_TABLE_RUNS:    return "fn_trace_runs";
    case FNT_TABLE_PROFILE: return "fn_profile";
    case FNT_TABLE_CALLS:   return "fn_trace_calls";
  }
  return 0;
}

const char *fnt_column_name(fnt_table t, int col){
  if( col<0 || col>=fnt_table_ncol(t) ) return 0;
  return fnt_table_cols(t)[col].name;
}

int fnt_column_is_text(fnt_table t, int col){
  if( col<0 || col>=fnt_table_ncol(t) ) return 0;
  return fnt_table_cols(t)[col].is_text;
}

static const char *const kindNames[] = {"entry", "exit", "tail_exit"};

const char *fnt_kind_name(int kind){
  return kind>=0 && kind<3 ? kindNames[kind] : 0;
}

int fnt_kind_from_name(const char *name){
  int i;
  for(i=0; name && i<3; i++){
    if( strcmp(name, kindNames[i])==0 ) return i;
  }
  return -1;
}
