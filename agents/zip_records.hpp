// The records of a zip archive as its central directory lists them (a policy file is the zip
// torch.save writes), and the check of each stored record against its CRC-32: libtorch's reader
// skips that check, so a bit changed on disk or in transfer loaded as other weights without a word.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace agents {

struct ZipRecord {
  std::string name;               // as stored, e.g. "archive/data.pkl"
  std::uint16_t method = 0;       // 0: stored (what torch.save writes), 8: deflated
  std::uint32_t crc32 = 0;        // as the central directory records it
  std::uint64_t size = 0;         // uncompressed
  std::uint64_t stored_size = 0;  // as stored (compressed)
  std::uint64_t data_offset = 0;  // where its bytes start in the archive
};

// Every record, in the central directory's order; throws std::invalid_argument saying what is
// wrong when `bytes` is not a zip archive this reader understands (no end record, entries outside
// the archive, ZIP64).
std::vector<ZipRecord> read_zip_records(const std::vector<char>& bytes);

// The first stored record whose bytes do not match its CRC-32, or nullopt (deflated records are
// left to the reader that inflates them).
std::optional<std::string> first_crc_mismatch(const std::vector<char>& bytes, const std::vector<ZipRecord>& records);

}  // namespace agents
