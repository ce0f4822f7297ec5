/*-------------------------------------------------------------------------
 *
 * admission.c
 *	  Entry points of routing and admission (engine/admission.cpp):
 *	  genroc._route, _admit, _fill_slots, _slot_holders, _ended,
 *	  _room_freed, _queue_settings, _reroute_handler and _handler_missing, between SPI_connect and SPI_finish,
 *	  their error raised after C++ returned (definitions.c's frame).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "engine_entry.h"
#include "genroc.h"

PG_FUNCTION_INFO_V1(genroc_route);
PG_FUNCTION_INFO_V1(genroc_admit);
PG_FUNCTION_INFO_V1(genroc_fill_slots);
PG_FUNCTION_INFO_V1(genroc_slot_holders);
PG_FUNCTION_INFO_V1(genroc_ended);
PG_FUNCTION_INFO_V1(genroc_room_freed);
PG_FUNCTION_INFO_V1(genroc_queue_settings);
PG_FUNCTION_INFO_V1(genroc_reroute_handler);
PG_FUNCTION_INFO_V1(genroc_handler_missing);

/* genroc._route(p_definition genroc._definitions, p_labels jsonb) RETURNS text */
Datum
genroc_route(PG_FUNCTION_ARGS)
{
	char	   *queue = NULL;
	int64		id = 0;
	char	   *name = NULL;
	char	   *labels = genroc_jsonb_arg_or_null(fcinfo, 1);

	if (!PG_ARGISNULL(0))
	{
		HeapTupleHeader def = PG_GETARG_HEAPTUPLEHEADER(0);
		bool		isnull;
		Datum		d;

		d = GetAttributeByName(def, "id", &isnull);
		if (!isnull)
			id = DatumGetInt64(d);
		d = GetAttributeByName(def, "name", &isnull);
		if (!isnull)
			name = TextDatumGetCString(d);
	}
	GENROC_ENGINE_CALL(genroc_engine_route(id, name, labels, &queue, &engine_err));
	PG_RETURN_DATUM(genroc_text_answer(queue));
}

/* genroc._admit(p_instance bigint, p_request jsonb DEFAULT NULL) RETURNS text */
Datum
genroc_admit(PG_FUNCTION_ARGS)
{
	char	   *status = NULL;
	char	   *request = genroc_jsonb_arg_or_null(fcinfo, 1);

	if (PG_ARGISNULL(0))
		genroc_refuse_null("p_instance");
	GENROC_ENGINE_CALL(genroc_engine_admit(PG_GETARG_INT64(0), request, &status, &engine_err));
	PG_RETURN_DATUM(genroc_text_answer(status));
}

/* genroc._fill_slots(p_queue text, p_partition text) RETURNS void */
Datum
genroc_fill_slots(PG_FUNCTION_ARGS)
{
	char	   *queue = genroc_text_arg_or_null(fcinfo, 0);
	char	   *partition = genroc_text_arg_or_null(fcinfo, 1);

	GENROC_ENGINE_CALL(genroc_engine_fill_slots(queue, partition, &engine_err));
	PG_RETURN_VOID();
}

/* genroc._slot_holders(p_queue text, p_partition text) RETURNS int */
Datum
genroc_slot_holders(PG_FUNCTION_ARGS)
{
	int64_t		holders = 0;
	char	   *queue = genroc_text_arg_or_null(fcinfo, 0);
	char	   *partition = genroc_text_arg_or_null(fcinfo, 1);

	GENROC_ENGINE_CALL(genroc_engine_slot_holders(queue, partition, &holders, &engine_err));
	PG_RETURN_INT32((int32) holders);
}

/* genroc._ended(p_instance bigint) RETURNS void */
Datum
genroc_ended(PG_FUNCTION_ARGS)
{

	if (PG_ARGISNULL(0))
		genroc_refuse_null("p_instance");
	GENROC_ENGINE_CALL(genroc_engine_ended(PG_GETARG_INT64(0), &engine_err));
	PG_RETURN_VOID();
}

/* genroc._room_freed(p_queue text) RETURNS void */
Datum
genroc_room_freed(PG_FUNCTION_ARGS)
{
	char	   *queue = genroc_text_arg_or_null(fcinfo, 0);

	GENROC_ENGINE_CALL(genroc_engine_room_freed(queue, &engine_err));
	PG_RETURN_VOID();
}

static Datum
interval_of_ms(int64_t ms)
{
	Interval   *iv = palloc0(sizeof(Interval));

	iv->time = ms * 1000;
	return IntervalPGetDatum(iv);
}

/*
 * genroc._queue_settings(p_queue text, OUT kind text, OUT global_concurrency
 * int, OUT partition_concurrency int, OUT rate_limit int, OUT rate_period
 * interval, OUT partition_rate_limit int, OUT partition_rate_period
 * interval).  The periods as their milliseconds (a day is 24 hours).
 */
Datum
genroc_queue_settings(PG_FUNCTION_ARGS)
{
	GenrocQueueSettings s;
	char	   *queue = genroc_text_arg_or_null(fcinfo, 0);
	TupleDesc	tupdesc;
	Datum		values[7];
	bool		nulls[7] = {false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "genroc._queue_settings: a composite result was expected");
	tupdesc = BlessTupleDesc(tupdesc);
	GENROC_ENGINE_CALL(genroc_engine_queue_settings(queue, &s, &engine_err));
	nulls[0] = s.kind == NULL;
	values[0] = s.kind ? CStringGetTextDatum(s.kind) : (Datum) 0;
	values[1] = Int32GetDatum((int32) s.global_concurrency);
	values[2] = Int32GetDatum((int32) s.partition_concurrency);
	nulls[3] = nulls[4] = !s.has_rate;
	values[3] = Int32GetDatum((int32) s.rate_limit);
	values[4] = s.has_rate ? interval_of_ms(s.rate_period_ms) : (Datum) 0;
	nulls[5] = nulls[6] = !s.has_partition_rate;
	values[5] = Int32GetDatum((int32) s.partition_rate_limit);
	values[6] = s.has_partition_rate ? interval_of_ms(s.partition_rate_period_ms) : (Datum) 0;
	genroc_engine_free_queue_settings(&s);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* genroc._reroute_handler(p_handler text, p_skip_locked boolean DEFAULT false) RETURNS void */
Datum
genroc_reroute_handler(PG_FUNCTION_ARGS)
{
	char	   *handler = genroc_text_arg_or_null(fcinfo, 0);
	int			skip_locked = !PG_ARGISNULL(1) && PG_GETARG_BOOL(1);

	GENROC_ENGINE_CALL(genroc_engine_reroute_handler(handler, skip_locked, &engine_err));
	PG_RETURN_VOID();
}

static char *
text_attribute(HeapTupleHeader row, const char *name)
{
	bool		isnull;
	Datum		d = GetAttributeByName(row, name, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

/* genroc._handler_missing(p_inst genroc._instances) RETURNS text */
Datum
genroc_handler_missing(PG_FUNCTION_ARGS)
{
	GenrocMissingHandler m = {0};
	HeapTupleHeader row;
	char	   *status = NULL;
	bool		isnull;
	Datum		d;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	row = PG_GETARG_HEAPTUPLEHEADER(0);
	d = GetAttributeByName(row, "id", &isnull);
	if (isnull)
		PG_RETURN_NULL();
	m.id = DatumGetInt64(d);
	m.resource = text_attribute(row, "resource");
	m.queue = text_attribute(row, "queue");
	m.lease_owner = text_attribute(row, "lease_owner");
	m.state = text_attribute(row, "state");
	d = GetAttributeByName(row, "lease_epoch", &isnull);
	m.has_lease_epoch = !isnull;
	m.lease_epoch = isnull ? 0 : DatumGetInt64(d);
	d = GetAttributeByName(row, "interruptions", &isnull);
	m.has_interruptions = !isnull;
	m.interruptions = isnull ? 0 : DatumGetInt32(d);
	GENROC_ENGINE_CALL(genroc_engine_handler_missing(&m, &status, &engine_err));
	if (status == NULL)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(genroc_text_answer(status));
}
