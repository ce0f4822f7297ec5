// sfn_api.hpp — the Step Functions API (AWS JSON 1.0) over the Store, so
// AWS's CLI and SDKs drive genroc unchanged.
//
// `genroc serve` and `genroc api` answer `POST /` with
// `X-Amz-Target: AWSStepFunctions.<Action>` and
// `Content-Type: application/x-amz-json-1.0` beside the HTTP API
// (http_api.cpp reads the request and checks its SigV4 signature,
// sigv4.hpp); this file maps each action onto the Store's operations.
//
// Glossary
//   state machine  a genroc definition name; its versions are the
//                  definition's versions (every change of content is one)
//   execution      a top-level instance; its name is kept in the label
//                  "sfn_execution" and, as an idempotency key
//                  "sfn:<machine>:<name>", makes a second start of that name
//                  answer the first; an instance started another way is
//                  named "genroc-<id>"
//   activity       a genroc activity (resource activity:NAME); the ARN
//                  arn:aws:states:REGION:ACCOUNT:activity:NAME in a
//                  definition's Resource is stored as activity:NAME
//   paging token   base64url of {what, where} and an HMAC of it: opaque,
//                  and refused (InvalidToken) when changed or used for
//                  another listing
//
// Errors are AWS's: HTTP 400 and {"__type": NAME, "message": TEXT}, NAME
// from the service model (ExecutionDoesNotExist, StateMachineDoesNotExist,
// StateMachineAlreadyExists, InvalidDefinition, InvalidArn, InvalidName,
// InvalidExecutionInput, InvalidOutput, InvalidToken, ExecutionAlreadyExists,
// ActivityDoesNotExist, TaskDoesNotExist, ValidationException,
// AccessDeniedException, UnknownOperationException).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "auth.hpp"
#include "store.hpp"

namespace genroc::sfn {

// Longest wait of GetActivityTask (AWS's: 60 s).
inline constexpr int64_t kActivityPollMs = 60'000;

struct Options {
	std::string region = "us-east-1";		 // --sfn-region: ARNs and the SigV4 scope
	std::string account = "000000000000";	 // --sfn-account: ARNs
	std::string paging_key;					 // HMAC key of paging tokens (set by the server)
	int64_t sync_timeout_ms = 60'000;		 // --sfn-sync-timeout: StartSyncExecution's bound
	int64_t activity_poll_ms = kActivityPollMs;
};

// An answer refused: AWS's error name and a message.
struct Failure {
	std::string type;
	std::string message;
	int status = 400;
};

// Serves one action.  `who` is the caller with --auth (nullopt without:
// everything allowed, as the HTTP API).  `open_store` gives a store per
// call (a long poll returns it between tries); `stopping` says the server
// is going down.  Throws Failure.
json call(const Options &options, const std::string &action, const json &body,
		  const std::function<Store &()> &store, const std::optional<auth::Principal> &who,
		  const std::function<bool()> &stopping);

// TestState (sfn_test_state.cpp): one state run alone on an input, nothing
// stored.  Throws Failure.
json test_state(const Options &options, const json &body);

// GetExecutionHistory's events (sfn_history.cpp): the log of the execution's
// instance `inst` and of its Parallel branches and Map items, as AWS's event
// types and details; each state's input and output when a replay of the
// log's steps agrees with the log.  `data`: includeExecutionData.
json history_events(const Options &options, Store &store, const json &inst, bool data);

// The actions served, as AWS names them.
const std::vector<std::string> &actions();

}  // namespace genroc::sfn
