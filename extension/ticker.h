/*
 * ticker.h — the in-database ticker (ticker.c): its settings and, under
 * shared_preload_libraries, one background worker per database.
 */
#ifndef GENROC_TICKER_H
#define GENROC_TICKER_H

extern void genroc_ticker_init(void);

#endif
