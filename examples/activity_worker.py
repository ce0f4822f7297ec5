#!/usr/bin/env python3
"""An activity worker over genroc's HTTP API, with Python's standard library only.

It claims the tasks of one activity ("Resource": "activity:greet" in a definition,
examples/greet.json), does the work, and reports each result with the task's token:

    POST /api/activities/{activity}/claim  {"worker": ID, "n": 1}  -> {"tasks": [...]}
    POST /api/activities/succeed           {"token": T, "output": RESULT}
    POST /api/activities/fail              {"token": T, "error": NAME, "cause": TEXT}

    python3 examples/activity_worker.py --url http://127.0.0.1:8448 --activity greet

With `genroc serve --auth`, pass a token with the worker permission (--token or
GENROC_TOKEN).  A task claimed but never reported waits for its TimeoutSeconds, then
fails with States.Timeout (Retry and Catch apply); a long task sends
POST /api/activities/heartbeat {"token": T} within its HeartbeatSeconds.
"""
import argparse
import json
import os
import socket
import sys
import time
import urllib.error
import urllib.request


def call(url, path, body, token):
    """POSTs JSON, returns the answer's JSON; raises urllib.error.HTTPError with
    genroc's {"error": {"sqlstate", "message"}} as its body."""
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)


def work(task_input):
    """The activity's own work: the task input in, the result out (any JSON).
    An exception fails the task with its message as the cause."""
    who = task_input.get("who", "world") if isinstance(task_input, dict) else "world"
    return {"text": "hello " + who, "by": "activity_worker.py"}


def main():
    parser = argparse.ArgumentParser(description="an activity worker over genroc's HTTP API")
    parser.add_argument("--url", default=os.environ.get("GENROC_URL", "http://127.0.0.1:8448"))
    parser.add_argument("--activity", default="greet")
    parser.add_argument("--worker", default="py-" + socket.gethostname(),
                        help="this worker's id (claims are recorded under it)")
    parser.add_argument("--token", default=os.environ.get("GENROC_TOKEN", ""))
    parser.add_argument("--max-tasks", type=int, default=0, help="stop after this many (0: never)")
    parser.add_argument("--poll", type=float, default=1.0, help="seconds between claims when idle")
    args = parser.parse_args()

    done = 0
    while args.max_tasks == 0 or done < args.max_tasks:
        try:
            tasks = call(args.url, "/api/activities/%s/claim" % args.activity,
                         {"worker": args.worker, "n": 1}, args.token)["tasks"]
        except (urllib.error.URLError, OSError) as e:  # genroc down or refusing: try again
            print("claim failed: %s" % e, file=sys.stderr)
            time.sleep(args.poll)
            continue
        if not tasks:
            time.sleep(args.poll)
            continue
        for task in tasks:
            try:
                report = ("/api/activities/succeed", {"token": task["token"], "output": work(task["input"])})
            except Exception as e:  # the work failed: genroc's Retry and Catch decide what next
                report = ("/api/activities/fail", {"token": task["token"], "error": "greet.Failed", "cause": str(e)})
            try:
                status = call(args.url, report[0], report[1], args.token)["status"]
                print("instance %s: %s" % (task["instance_id"], status), file=sys.stderr)
            except urllib.error.HTTPError as e:  # 409 RC007: the token expired (timed out) or was used
                print("instance %s: report refused: %s" % (task["instance_id"], e.read().decode()), file=sys.stderr)
            done += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
