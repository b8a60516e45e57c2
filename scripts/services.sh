#!/usr/bin/env bash
# Make sure the PostgreSQL and Redis servers the test suite needs are up; start them if they are
# down. Exits non-zero (never skips) when one cannot be reached: the suite must not run half-blind.
set -uo pipefail

pg_up() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

if ! pg_up; then
  echo "services: PostgreSQL is down, starting it"
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  fi
  for _ in $(seq 1 30); do pg_up && break; sleep 1; done
fi
if ! redis_up; then
  echo "services: Redis is down, starting it"
  if command -v redis-server >/dev/null 2>&1; then
    mkdir -p /var/lib/redis /var/log/redis
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
  fi
  for _ in $(seq 1 30); do redis_up && break; sleep 1; done
fi

status=0
pg_up || { echo "services: PostgreSQL at 127.0.0.1:5432 is not reachable" >&2; status=1; }
redis_up || { echo "services: Redis at 127.0.0.1:6379 is not reachable" >&2; status=1; }
exit $status
