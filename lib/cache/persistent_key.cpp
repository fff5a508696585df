#include "nkicc/cache/persistent_key.h"

#include "nkicc/cache/py_repr.h"
#include "nkicc/support/file_io.h"
#include "nkicc/support/sha256.h"
#include "nkicc/version.h"

#include <fmt/format.h>

#include <cstring>
#include <elf.h>
#include <link.h>

namespace nkicc {

namespace {

/// The GNU build-id note of the main program, from its loaded program headers.
std::string read_gnu_build_id() {
  std::string id;
  dl_iterate_phdr(
      [](dl_phdr_info *info, std::size_t, void *data) -> int {
        auto &out = *static_cast<std::string *>(data);
        // The first object reported is the main program.
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_NOTE)
            continue;
          auto *p = reinterpret_cast<const unsigned char *>(info->dlpi_addr + ph.p_vaddr);
          const unsigned char *end = p + ph.p_memsz;
          while (p + sizeof(ElfW(Nhdr)) <= end) {
            ElfW(Nhdr) note;
            std::memcpy(&note, p, sizeof note);
            const unsigned char *name = p + sizeof note;
            const unsigned char *desc = name + ((note.n_namesz + 3) & ~3u);
            const unsigned char *next = desc + ((note.n_descsz + 3) & ~3u);
            if (next > end)
              break;
            if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
              for (std::size_t k = 0; k < note.n_descsz; ++k)
                out += fmt::format("{:02x}", desc[k]);
              return 1;
            }
            p = next;
          }
        }
        return 1;
      },
      &id);
  return id;
}

KeyComponent text_component(std::string name, std::string value) {
  std::string digest = sha256_hex(value);
  return {std::move(name), std::move(value), std::move(digest)};
}

/// The components every key starts with.
std::vector<KeyComponent> common_components(std::string_view kind, std::string_view kernel,
                                            const KeyContext &context) {
  std::vector<KeyComponent> c;
  c.push_back(text_component("format", std::to_string(kCacheEntryFormatVersion)));
  c.push_back(text_component("nkicc_version", NKICC_VERSION_STRING));
  c.push_back(text_component("nkicc_build", nkicc_build_identity()));
  c.push_back(text_component("target", context.target + (context.target_is_fallback ? " (fallback)" : "")));
  c.push_back(text_component("limits", fmt::format("max_instructions={}", context.max_instructions)));
  c.push_back(text_component("kind", std::string(kind)));
  c.push_back(text_component("kernel", std::string(kernel)));
  return c;
}

void add_files(std::vector<KeyComponent> &c, const std::vector<KeyFile> &files) {
  for (const KeyFile &f : files)
    c.push_back({(f.path.empty() ? "source " : "file ") + f.name, f.path.empty() ? "inline" : f.path, f.digest});
}

std::string arg_text(const RegistryArg &a) {
  switch (a.kind) {
  case RegistryArg::Kind::Operand:
    return fmt::format("operand {}", a.index);
  case RegistryArg::Kind::ResultDim:
    return fmt::format("result_dim {} {}", a.index, a.dim);
  case RegistryArg::Kind::Attr: {
    std::string out = "attr ";
    append_py_str_repr(out, a.attr);
    if (a.value) {
      out += " default ";
      append_py_repr(out, *a.value);
    }
    return out;
  }
  case RegistryArg::Kind::Const: {
    std::string out = "const ";
    append_py_repr(out, *a.value);
    return out;
  }
  case RegistryArg::Kind::OperandShape:
  case RegistryArg::Kind::Result:
  case RegistryArg::Kind::ResultShape:
  case RegistryArg::Kind::DType:
  case RegistryArg::Kind::Object:
    return a.canonical_text();
  }
  return {};
}

} // namespace

const std::string &nkicc_build_identity() {
  static const std::string identity = [] {
    std::string id = read_gnu_build_id();
    if (!id.empty())
      return "gnu-build-id:" + id;
    // A linker that wrote no build-id: the executable's bytes stand for the build.
    std::string why;
    auto exe = read_file("/proc/self/exe", why);
    return "sha256:" + (exe ? sha256_hex(*exe) : std::string("unknown"));
  }();
  return identity;
}

std::string registry_entry_text(const RegistryEntry &entry) {
  std::string out;
  out += "func_name ";
  append_py_str_repr(out, entry.func_name);
  out += "\nsource ";
  std::string_view source = entry.source;
  std::size_t slash = source.rfind('/');
  append_py_str_repr(out, slash == std::string_view::npos ? source : source.substr(slash + 1));
  out += "\nentry ";
  append_py_str_repr(out, entry.entry);
  for (const RegistryArg &a : entry.args)
    out += "\narg " + arg_text(a);
  for (const auto &[name, a] : entry.kwargs) {
    out += "\nkwarg ";
    append_py_str_repr(out, name);
    out += " " + arg_text(a);
  }
  out += fmt::format("\nresults {}\n", entry.results);
  return out;
}

std::string persistent_key_of(const std::vector<KeyComponent> &components) {
  std::string text;
  for (const KeyComponent &c : components) {
    text += c.name;
    text += '\0';
    text += c.digest;
    text += '\n';
  }
  return sha256_hex(text);
}

PersistentKey external_persistent_key(std::string_view func_name, std::string_view specialization_key,
                                      const KeyContext &context, const std::vector<KeyFile> &files) {
  PersistentKey k;
  k.kernel = std::string(func_name);
  k.components = common_components("external", func_name, context);
  k.components.push_back(text_component("call", fmt::format("{}:{}", func_name, specialization_key)));
  add_files(k.components, files);
  k.key = persistent_key_of(k.components);
  return k;
}

PersistentKey internal_persistent_key(const InternalCall &call, std::string_view per_run_key,
                                      const RegistryEntry &entry, const KeyContext &context,
                                      const std::vector<KeyFile> &files) {
  PersistentKey k;
  k.kernel = call.internal;
  k.components = common_components("internal", call.internal, context);
  k.components.push_back(text_component("call", std::string(per_run_key)));
  k.components.push_back(text_component("registry_entry", registry_entry_text(entry)));
  add_files(k.components, files);
  k.key = persistent_key_of(k.components);
  return k;
}

std::vector<std::string> differing_components(const std::vector<std::pair<std::string, std::string>> &a,
                                              const std::vector<std::pair<std::string, std::string>> &b) {
  std::vector<std::string> out;
  auto find = [](const auto &list, const std::string &name) -> const std::string * {
    for (const auto &[n, d] : list)
      if (n == name)
        return &d;
    return nullptr;
  };
  for (const auto &[name, digest] : a) {
    const std::string *other = find(b, name);
    if (!other || *other != digest)
      out.push_back(name);
  }
  for (const auto &[name, digest] : b)
    if (!find(a, name))
      out.push_back(name);
  return out;
}

} // namespace nkicc
