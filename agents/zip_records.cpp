#include "agents/zip_records.hpp"

#include <zlib.h>

#include <algorithm>
#include <stdexcept>

namespace agents {
namespace {

// Zip's little-endian fields (APPNOTE.TXT 4.3), read only within the archive.
std::uint64_t field(const std::vector<char>& bytes, std::uint64_t at, int width) {
  if (at + static_cast<std::uint64_t>(width) > bytes.size()) throw std::invalid_argument("a zip field past the end of the file");
  std::uint64_t value = 0;
  for (int k = width - 1; k >= 0; --k) value = (value << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::uint64_t>(k)]);
  return value;
}

constexpr std::uint64_t kEndSignature = 0x06054b50, kEntrySignature = 0x02014b50, kLocalSignature = 0x04034b50;
constexpr std::uint64_t kEndBytes = 22, kEntryBytes = 46, kLocalBytes = 30;

}  // namespace

std::vector<ZipRecord> read_zip_records(const std::vector<char>& bytes) {
  // The end record is the last 22 bytes, before a comment of at most 65,535 bytes.
  if (bytes.size() < kEndBytes) throw std::invalid_argument("not a zip archive (too short)");
  std::optional<std::uint64_t> end;
  const std::uint64_t lowest = bytes.size() > kEndBytes + 65535 ? bytes.size() - kEndBytes - 65535 : 0;
  for (std::uint64_t at = bytes.size() - kEndBytes + 1; at-- > lowest;)
    if (field(bytes, at, 4) == kEndSignature && at + kEndBytes + field(bytes, at + 20, 2) == bytes.size()) {
      end = at;
      break;
    }
  if (!end) throw std::invalid_argument("not a zip archive (no end of central directory)");
  const std::uint64_t count = field(bytes, *end + 10, 2), directory = field(bytes, *end + 16, 4);
  if (count == 0xffff || directory == 0xffffffff) throw std::invalid_argument("a ZIP64 archive, larger than any policy");
  std::vector<ZipRecord> records;
  std::uint64_t at = directory;
  for (std::uint64_t k = 0; k < count; ++k) {
    if (field(bytes, at, 4) != kEntrySignature) throw std::invalid_argument("a damaged zip central directory");
    ZipRecord r;
    r.method = static_cast<std::uint16_t>(field(bytes, at + 10, 2));
    r.crc32 = static_cast<std::uint32_t>(field(bytes, at + 16, 4));
    r.stored_size = field(bytes, at + 20, 4);
    r.size = field(bytes, at + 24, 4);
    const std::uint64_t name = field(bytes, at + 28, 2), extra = field(bytes, at + 30, 2), comment = field(bytes, at + 32, 2);
    const std::uint64_t local = field(bytes, at + 42, 4);
    if (at + kEntryBytes + name > bytes.size()) throw std::invalid_argument("a zip entry's name past the end of the file");
    r.name.assign(bytes.data() + at + kEntryBytes, name);
    if (field(bytes, local, 4) != kLocalSignature) throw std::invalid_argument("zip record " + r.name + " is not where the directory says");
    r.data_offset = local + kLocalBytes + field(bytes, local + 26, 2) + field(bytes, local + 28, 2);
    if (r.data_offset + r.stored_size > bytes.size()) throw std::invalid_argument("zip record " + r.name + " reaches past the end of the file");
    records.push_back(std::move(r));
    at += kEntryBytes + name + extra + comment;
  }
  return records;
}

std::optional<std::string> first_crc_mismatch(const std::vector<char>& bytes, const std::vector<ZipRecord>& records) {
  for (const ZipRecord& r : records) {
    if (r.method != 0) continue;
    uLong crc = ::crc32(0L, Z_NULL, 0);
    // zlib takes at most 4 GiB a call; a stored record here is far smaller, but stay within it.
    for (std::uint64_t done = 0; done < r.stored_size;) {
      const auto chunk = static_cast<uInt>(std::min<std::uint64_t>(r.stored_size - done, 1u << 30));
      crc = ::crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + r.data_offset + done), chunk);
      done += chunk;
    }
    if (static_cast<std::uint32_t>(crc) != r.crc32) return r.name;
  }
  return std::nullopt;
}

}  // namespace agents
