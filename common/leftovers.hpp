// What a killed run leaves in a results folder: the temporary file of an atomic write that never
// got renamed (a file .NAME.orchestra-tmp-PID, atomic_file.hpp) and the hidden staging folder of a
// policy's results or of a copied result that never got swapped in (folders .LABEL.staging-PID-XXXXXX,
// .LABEL.copy-PID-XXXXXX, and either with .old while it was moved aside). They are hidden from every
// reader, but take space, and nothing else would ever remove them. Only these shapes, hidden and of
// their kind (a file, a folder), are leftovers: a user's `backup.tmp-2024/` or `draft.tmp-1` is not.
#pragma once

#include <string>

namespace common {

// Removes, in `dir` and the folders inside it down to `depth` levels, each leftover whose process
// has ended (no process of that pid). One whose pid is alive (its run may still be writing, or the
// pid was reused) is left alone. Returns how many were removed; never throws.
int remove_leftovers(const std::string& dir, int depth);

// The pid a leftover's name carries (0 when `name` is no leftover's): ".train.csv.orchestra-tmp-123" -> 123,
// ".dsgd.staging-123-Ab12Cd" -> 123.
long leftover_pid(const std::string& name);

}  // namespace common
