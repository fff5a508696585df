// The persistent cache's part of the command line (issue 14): the cache options of `trace`,
// `key --explain`, and the `nkicc cache stats|clear|verify|trim` subcommand. Kept in its own
// file so that the rest of the CLI only calls these few functions.
#pragma once

#include "options.h"

#include "nkicc/driver/driver.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace nkicc::tool {

struct CacheCliOptions {
  std::string dir;      ///< --cache-dir (or NKICC_CACHE_DIR)
  std::string max_size; ///< --cache-max-size (or NKICC_CACHE_MAX_SIZE)
  std::string remote;   ///< --remote-cache (or NKICC_REMOTE_CACHE)
  bool remote_read_only = false;
  double remote_timeout = 2.0;
  std::string format = "text"; ///< `nkicc cache ... --format`
  bool explain = false;        ///< `nkicc key --explain`
  std::string key_format = "text";
  CLI::App *cache = nullptr; ///< the `cache` subcommand
  CLI::App *stats = nullptr, *clear = nullptr, *verify = nullptr, *trim = nullptr;
};

/// `--cache-dir`, `--cache-max-size`, `--remote-cache*` on a subcommand that traces.
void add_trace_cache_options(CLI::App &trace, CacheCliOptions &o);
/// `--explain` and `--format` on `nkicc key`.
void add_key_cache_options(CLI::App &key, CacheCliOptions &o);
/// The `cache` subcommand, and its four actions and their options when `named` (the command
/// line names `cache`; else it is only listed, as the other subcommands are).
void add_cache_subcommand(CLI::App &app, CacheCliOptions &o, bool named);

/// Fills the driver's options from the parsed flags and the environment, for a subcommand that
/// traces (`tracing`; the environment is not read for others, so that a stale NKICC_* value
/// cannot break `nkicc dis`). A usage error (exit 2) is returned for cli.cpp to print.
std::optional<UsageError> apply_cache_options(const CacheCliOptions &o, DriverOptions &options, bool tracing);

/// Runs `nkicc cache ...` when it was given; its exit code.
std::optional<int> run_cache_subcommand(const CacheCliOptions &o);

} // namespace nkicc::tool
