#!/bin/sh
# Entrypoint of the local cluster's PostgreSQL image (tools/cluster/images.sh): Debian's
# postgresql package, initialised from the same variables as the official image
# (POSTGRES_USER, POSTGRES_PASSWORD, POSTGRES_DB, PGDATA), so deploy/postgres.yaml runs on it.
set -eu
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
if [ -z "${POSTGRES_PASSWORD:-}" ]; then
	echo "entrypoint: POSTGRES_PASSWORD is required" >&2
	exit 1
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
	mkdir -p "$PGDATA"
	chmod 700 "$PGDATA"
	pwfile=$(mktemp)
	printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
	initdb -D "$PGDATA" --username="$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256
	rm -f "$pwfile"
	echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
	pg_ctl -D "$PGDATA" -w -o "-c listen_addresses='' -k /var/run/postgresql" start
	if [ "$POSTGRES_DB" != postgres ]; then
		psql -v ON_ERROR_STOP=1 -h /var/run/postgresql -U "$POSTGRES_USER" -d postgres \
			-c "CREATE DATABASE \"$POSTGRES_DB\""
	fi
	pg_ctl -D "$PGDATA" -w -m fast stop
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/var/run/postgresql
