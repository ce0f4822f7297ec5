/*
 * Privileges: which capability (12_roles.sql) may call which function.
 * PUBLIC has nothing; docs/security.md "Roles and ownership" carries the same table.
 * A function added later gets nothing until it is listed here (the pgTAP
 * test test/pgtap/roles.sql fails for a public function with no row).
 */

GRANT USAGE ON SCHEMA genroc TO genroc_admin, genroc_operator, genroc_worker, genroc_user;

DO $$
DECLARE
	v_fn regprocedure;
	v_grant record;
BEGIN
	FOR v_fn IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
				WHERE p.pronamespace = 'genroc'::regnamespace LOOP
		EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', v_fn);
	END LOOP;
	-- genroc_admin is a member of the three others: it has their grants.
	FOR v_grant IN SELECT * FROM (VALUES
		('genroc.define(text, jsonb)',							'genroc_user'),
		('genroc.define(text, text)',							'genroc_user'),
		('genroc.start(text, jsonb, jsonb)',					'genroc_user'),
		('genroc.start_many(text, jsonb, jsonb)',				'genroc_user'),
		('genroc.list_definitions()',							'genroc_user, genroc_operator'),
		('genroc.get_definition(text, int)',					'genroc_user, genroc_operator'),
		('genroc.alias_set(text, text, jsonb, text)',			'genroc_user'),
		('genroc.alias_drop(text, text)',						'genroc_user'),
		('genroc.undefine(text, int)',							'genroc_user'),
		('genroc.get_alias(text, text)',						'genroc_user, genroc_operator'),
		('genroc.list_aliases(text)',							'genroc_user, genroc_operator'),
		('genroc.get_instance(bigint)',							'genroc_user, genroc_operator'),
		('genroc.list_instances(jsonb)',						'genroc_user, genroc_operator'),
		('genroc.history(bigint)',								'genroc_user, genroc_operator'),
		('genroc.get_instance(bigint, jsonb)',					'genroc_user, genroc_operator'),
		('genroc.history(bigint, jsonb)',						'genroc_user, genroc_operator'),
		('genroc.get_object(text)',								'genroc_user, genroc_operator'),
		('genroc.cancel(bigint, text, text)',					'genroc_user, genroc_operator'),
		('genroc.emit(bigint, text, jsonb)',					'genroc_user, genroc_operator'),
		('genroc.retry(bigint)',								'genroc_operator'),
		('genroc.resume(bigint, jsonb)',						'genroc_operator'),
		('genroc.redrive(bigint, text)',						'genroc_operator'),
		('genroc.list_workers()',								'genroc_worker, genroc_operator'),
		('genroc.list_queues()',								'genroc_worker, genroc_operator'),
		('genroc.queue_stats()',			'genroc_user, genroc_operator, genroc_worker'),
		('genroc.metrics(int)',									'genroc_worker, genroc_operator'),
		('genroc.tickers()',									'genroc_worker, genroc_operator'),
		('genroc.worker_register(text, jsonb)',					'genroc_worker'),
		('genroc.worker_heartbeat(text)',						'genroc_worker'),
		('genroc.worker_stop(text)',							'genroc_worker'),
		('genroc.worker_drain(text)',							'genroc_worker, genroc_operator'),
		('genroc.claim(text, text[], int)',						'genroc_worker'),
		('genroc.claim_wait(text, text[], int, interval)',		'genroc_worker'),
		('genroc.claim_wake(text[])',							'genroc_worker'),
		('genroc.renew(text, bigint[])',						'genroc_worker'),
		('genroc.release(text, bigint[])',						'genroc_worker'),
		('genroc.complete(bigint, bigint, jsonb)',				'genroc_worker'),
		('genroc.fail(bigint, bigint, text, text)',				'genroc_worker'),
		('genroc.complete_and_claim(bigint, bigint, jsonb, text, text[])', 'genroc_worker'),
		('genroc.fail_and_claim(bigint, bigint, text, text, text, text[])', 'genroc_worker'),
		('genroc.complete_many(bigint[], bigint[], jsonb[], text, text[])', 'genroc_worker'),
		('genroc.claim_activity(text, text, int)',				'genroc_worker'),
		('genroc.activity_succeed(text, jsonb)',				'genroc_worker'),
		('genroc.activity_fail(text, text, text)',				'genroc_worker'),
		('genroc.activity_heartbeat(text)',						'genroc_worker'),
		('genroc.tick(int)',									'genroc_worker'),
		('genroc.queue_set(text, jsonb)',						'genroc_admin'),
		('genroc.queue_drop(text)',								'genroc_admin'),
		('genroc.prune(interval, interval, int)',				'genroc_admin'),
		('genroc.token_create(text, text[], text, text)',		'genroc_admin'),
		('genroc.token_verify(text)',							'genroc_admin'),
		('genroc.token_list()',									'genroc_admin'),
		('genroc.token_revoke(text)',							'genroc_admin'),
		('genroc.now()',				'genroc_user, genroc_operator, genroc_worker'),
		('genroc.durability()',			'genroc_user, genroc_operator, genroc_worker'),
		('genroc.capabilities()',		'genroc_user, genroc_operator, genroc_worker'),
		('genroc.version()',			'genroc_user, genroc_operator, genroc_worker'),
		-- what the views' filter calls, as the reading role; they answer
		-- only "may I see rows of this owner"
		('genroc._sees(oid, text)',		'genroc_user, genroc_operator, genroc_worker'),
		('genroc._may(oid, oid, text)',	'genroc_user, genroc_operator, genroc_worker'),
		('genroc._can(oid, text)',		'genroc_user, genroc_operator, genroc_worker'),
		('genroc._caller()',			'genroc_user, genroc_operator, genroc_worker')
	) AS g (fn, roles) LOOP
		EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s', v_grant.fn, v_grant.roles);
	END LOOP;
END;
$$;

GRANT SELECT ON genroc.instances TO genroc_user, genroc_operator;
GRANT SELECT ON genroc.workers, genroc.queues TO genroc_worker, genroc_operator;
GRANT SELECT ON genroc.queue_stats TO genroc_user, genroc_operator, genroc_worker;
