// What --help says after the options, and where nkicc's installed data lives.
#include "commands.h"

#include "nkicc/support/file_io.h"

#include <fmt/format.h>

#include <unistd.h>

namespace nkicc::tool {

namespace {

void section(std::string &out, std::string_view title, const std::vector<std::pair<std::string, std::string>> &rows) {
  std::size_t width = 0;
  for (const auto &[name, text] : rows)
    width = std::max(width, name.size());
  out += fmt::format("\n{}:\n", title);
  for (const auto &[name, text] : rows)
    out += fmt::format("  {:<{}}  {}\n", name, width, text);
}

} // namespace

std::string help_footer(const HelpFooter &footer) {
  std::string out;
  if (!footer.examples.empty()) {
    out += "\nExamples:\n";
    for (const std::string &e : footer.examples)
      out += "  " + e + "\n";
  }
  section(out, "Exit codes",
          {{"0", "success"},
           {"1", "the input is wrong (diagnostics on stderr)"},
           {"2", "usage error: the command line is wrong"},
           {"3", "I/O error: an input cannot be read or the output cannot be written"},
           {"70", "internal error: a bug in nkicc (the message says so)"}});
  std::vector<std::pair<std::string, std::string>> env = {
      {"NKICC_LOG_LEVEL", "log level when neither --log-level nor -v is given"},
      {"NO_COLOR", "no colour in diagnostics with --color=auto"}};
  if (footer.reads_target_environment) {
    env.emplace_back("NEURON_PLATFORM_TARGET_OVERRIDE", "the target when neither --target nor the description names one");
    env.emplace_back("NKICC_DMI_PRODUCT_NAME",
                     "the file holding the DMI product name (default /sys/devices/virtual/dmi/id/product_name)");
  }
  if (footer.records_nki_frontend)
    env.emplace_back("nki_frontend", "recorded in the BIR module as data");
  section(out, "Environment", env);
  out += "\nThe description format: " + join_path(parent_dir(data_dir()), "doc/nkicc/description.md") +
         " (docs/description.md in the sources); man nkicc.\n";
  return out;
}

std::string data_dir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string exe = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("nkicc");
  return join_path(parent_dir(parent_dir(exe)), "share/nkicc");
}

} // namespace nkicc::tool
