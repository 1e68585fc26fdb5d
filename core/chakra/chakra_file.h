// Internal to core/chakra: a Chakra ET file as protobuf messages. The file is
// length-prefixed protobuf (each message preceded by its size as a varint,
// protobuf's "delimited" form): one GlobalMetadata, then Nodes to the end.
// Reading and writing go through protobuf's own coded streams; nothing here
// encodes the wire format by hand.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "et_def.pb.h"  // generated from core/chakra/et_def.proto

namespace tracetwin::core::chakra::detail {

struct ChakraFile {
  ChakraProtoMsg::GlobalMetadata metadata;
  std::vector<ChakraProtoMsg::Node> nodes;
  std::vector<uint64_t> offsets;  // per node: byte of its length prefix (decompressed)
};

// Parses the decompressed bytes of a Chakra ET. `source` names it in errors.
// Throws InputError naming the byte offset and what was expected: a message
// that runs past the end (truncated), bytes that are not protobuf, a first
// message that is not a GlobalMetadata or a later one that is not a Node (a
// field the schema knows arriving with another wire type).
ChakraFile parseChakraBytes(std::string_view bytes, const std::string& source);

// Reads `path` (gzip or not, told by its first bytes) and parses it.
ChakraFile readChakraFile(const std::string& path);

// Writes the metadata, then nodes as they come; gzip when the path ends in
// ".gz". Throws InputError naming the path when it cannot be written.
class ChakraFileWriter {
 public:
  ChakraFileWriter(const std::string& path, const ChakraProtoMsg::GlobalMetadata& metadata);
  ~ChakraFileWriter();
  ChakraFileWriter(const ChakraFileWriter&) = delete;
  ChakraFileWriter& operator=(const ChakraFileWriter&) = delete;

  void write(const ChakraProtoMsg::Node& node);
  // Flushes and closes; errors surface here (the destructor only cleans up).
  void close();

 private:
  struct Streams;
  void writeMessage(const google::protobuf::Message& message);
  std::string path_;
  std::unique_ptr<Streams> streams_;
};

}  // namespace tracetwin::core::chakra::detail
