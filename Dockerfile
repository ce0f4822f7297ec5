# Dockerfile — genroc's images, built from this checkout (docs/operations.md "Packaging").
#
#   docker build --target runtime  -t genroc .            # genroc and genctl, distroless
#   docker build --target postgres -t genroc-postgres .   # PostgreSQL 15 with the extension
#
# Stage "build" runs the same steps as a fresh clone (scripts/deps.sh --product, then
# `make`, which builds the product only: no tests) and stages what the two
# images take: the extension's files (make install DESTDIR) and the binaries
# with the shared libraries they load (ldd) that the distroless base lacks.  Not run on the machine this was
# written on (no Docker engine there): README says what was checked.

FROM debian:12 AS build
WORKDIR /src
COPY scripts/deps.sh scripts/deps.sh
RUN bash scripts/deps.sh --product && rm -rf /var/lib/apt/lists/*
COPY . .
RUN make -s CMAKE_BUILD_TYPE=Release BUILD=build-image \
 && make -s install SKIP_CXX=1 DESTDIR=/out/postgres \
 && mkdir -p /out/runtime/usr/local/bin /out/runtime/usr/local/lib/genroc \
 && cp build-image/genroc build-image/genctl /out/runtime/usr/local/bin/ \
 && ldd build-image/genroc build-image/genctl | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u \
    | grep -vE '/lib(c|m|resolv|pthread|dl|rt|gcc_s|stdc\+\+)\.so' \
    | xargs cp -L -t /out/runtime/usr/local/lib/genroc/

# PostgreSQL with the extension: the official image of the same major
# version (Debian 12 based), the module and SQL scripts in its folders.
# CREATE EXTENSION genroc in a database still has to be run (compose does it
# with an init script).
FROM postgres:15-bookworm AS postgres
# the libraries the module loads besides PostgreSQL's: libcrypto and
# libpcre2-8 (JSONata's regular expressions), and tzdata (JSONata's time
# zones by IANA name, read from /usr/share/zoneinfo); the base has them, this
# says so
RUN apt-get update && apt-get install -y --no-install-recommends libssl3 libpcre2-8-0 tzdata \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/postgres/ /

# genroc and genctl on a distroless base: no shell, no package manager, no
# curl.  Health checks are the orchestrator's HTTP probes on /healthz.
FROM gcr.io/distroless/cc-debian12:nonroot AS runtime
COPY --from=build /out/runtime/ /
# the libraries the binaries load beyond the base's glibc and libstdc++
ENV LD_LIBRARY_PATH=/usr/local/lib/genroc
USER nonroot
EXPOSE 8448
ENTRYPOINT ["/usr/local/bin/genroc"]
CMD ["serve", "--listen", "0.0.0.0:8448"]
