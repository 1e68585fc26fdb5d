#include "core/chakra/chakra_file.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/stubs/logging.h>  // LogSilencer: library code prints nothing
#include <google/protobuf/unknown_field_set.h>
#include <google/protobuf/util/delimited_message_util.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/errors.h"
#include "core/input_files.h"
#include "core/text.h"
#include "core/trace_reader.h"

namespace tracetwin::core::chakra::detail {
namespace {

namespace pb = google::protobuf;

const char* wireTypeName(pb::UnknownField::Type t) {
  switch (t) {
    case pb::UnknownField::TYPE_VARINT:
      return "a varint";
    case pb::UnknownField::TYPE_FIXED32:
      return "a 32-bit value";
    case pb::UnknownField::TYPE_FIXED64:
      return "a 64-bit value";
    case pb::UnknownField::TYPE_LENGTH_DELIMITED:
      return "length-delimited bytes";
    case pb::UnknownField::TYPE_GROUP:
      return "a group";
  }
  return "an unknown wire type";
}

// protobuf keeps a field whose number the schema knows but whose wire type
// differs as an unknown field instead of failing: that is the sign of a
// message of another type. Fields the schema does not know are newer schema
// additions and are fine. Returns the first such field, described.
std::string mismatchedField(const pb::Message& m) {
  const pb::UnknownFieldSet& unknown = m.GetReflection()->GetUnknownFields(m);
  for (int k = 0; k < unknown.field_count(); ++k) {
    const pb::UnknownField& f = unknown.field(k);
    const pb::FieldDescriptor* known = m.GetDescriptor()->FindFieldByNumber(f.number());
    if (known == nullptr) continue;
    return fmt::format("its field {} holds {}, but {}.{} is a {}", f.number(),
                       wireTypeName(f.type()), m.GetDescriptor()->name(), known->name(),
                       known->type_name());
  }
  return "";
}

bool parses(pb::Message& m, const uint8_t* data, int size) {
  pb::LogSilencer quiet;  // protobuf would print why; the caller's error says it
  m.Clear();
  return m.ParsePartialFromArray(data, size) && mismatchedField(m).empty();
}

// What the other message type makes of bytes that are not `m`'s type: a
// Node where the GlobalMetadata belongs (a file without one), or a
// GlobalMetadata where a Node belongs (two files joined).
std::string otherType(const pb::Message& m, const uint8_t* data, int size) {
  if (m.GetDescriptor() == ChakraProtoMsg::Node::descriptor()) {
    ChakraProtoMsg::GlobalMetadata meta;
    if (parses(meta, data, size) && (!meta.version().empty() || meta.attr_size() > 0))
      return "a GlobalMetadata (a second file's start?)";
    return "";
  }
  ChakraProtoMsg::Node node;
  if (parses(node, data, size) && (node.id() != 0 || !node.name().empty()))
    return fmt::format("a Node (id {}, \"{}\"): a Chakra ET starts with its GlobalMetadata",
                       node.id(), node.name());
  return "";
}

// One length-prefixed message at the stream's position into `m`.
// Returns false at a clean end of the data.
bool readDelimited(pb::io::CodedInputStream& in, std::string_view bytes, pb::Message& m,
                   std::string_view source, std::string_view what, uint64_t* at) {
  *at = static_cast<uint64_t>(in.CurrentPosition());
  if (*at == bytes.size()) return false;
  uint32_t size = 0;
  if (!in.ReadVarint32(&size)) {
    throw InputError(fmt::format(
        "{}: byte {}: truncated: expected the length of a Chakra {} (a varint), found the end of "
        "the file or a malformed varint",
        source, *at, what));
  }
  const uint64_t body = static_cast<uint64_t>(in.CurrentPosition());
  if (size > bytes.size() - body) {
    throw InputError(fmt::format(
        "{}: byte {}: truncated: a Chakra {} of {} bytes, but only {} bytes are left in the file",
        source, *at, what, size, bytes.size() - body));
  }
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data()) + body;
  const bool ok = parses(m, data, static_cast<int>(size));
  if (!ok) {
    const std::string other = otherType(m, data, static_cast<int>(size));
    if (!other.empty()) {
      throw InputError(
          fmt::format("{}: byte {}: expected a Chakra {}, found {}", source, *at, what, other));
    }
    const std::string mismatch = mismatchedField(m);
    throw InputError(
        fmt::format("{}: byte {}: expected a Chakra {} of {} bytes: {}", source, *at, what, size,
                    mismatch.empty() ? "not valid protobuf (or a string that is not UTF-8)"
                                     : mismatch + " (a message of another type?)"));
  }
  in.Skip(static_cast<int>(size));
  return true;
}

}  // namespace

ChakraFile parseChakraBytes(std::string_view bytes, const std::string& source) {
  ChakraFile file;
  if (bytes.empty()) {
    throw InputError(fmt::format("{}: empty file; expected a Chakra execution trace", source));
  }
  pb::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                              static_cast<int>(bytes.size()));
  uint64_t at = 0;
  readDelimited(in, bytes, file.metadata, source, "GlobalMetadata (the first message)", &at);
  ChakraProtoMsg::Node node;
  while (readDelimited(in, bytes, node, source, "Node", &at)) {
    file.offsets.push_back(at);
    file.nodes.push_back(std::move(node));
  }
  return file;
}

ChakraFile readChakraFile(const std::string& path) {
  const std::string bytes = readMaybeGzipFile(path);
  if (bytes.size() > size_t{INT32_MAX}) {
    throw InputError(fmt::format(
        "{}: {} bytes decompressed; Chakra ETs over 2 GiB are not read (protobuf's coded stream "
        "limit)",
        path, bytes.size()));
  }
  return parseChakraBytes(bytes, path);
}

// ---- writing ------------------------------------------------------------------

struct ChakraFileWriter::Streams {
  int fd = -1;
  std::unique_ptr<pb::io::FileOutputStream> file;
  std::unique_ptr<pb::io::GzipOutputStream> gzip;
  pb::io::ZeroCopyOutputStream* out = nullptr;
};

ChakraFileWriter::ChakraFileWriter(const std::string& path,
                                   const ChakraProtoMsg::GlobalMetadata& metadata)
    : path_(path), streams_(std::make_unique<Streams>()) {
  refuseOverwritingAnInput(path, "the Chakra trace");
  streams_->fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (streams_->fd < 0) {
    throw InputError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  }
  streams_->file = std::make_unique<pb::io::FileOutputStream>(streams_->fd);
  streams_->out = streams_->file.get();
  const bool gz = text::hasGzipSuffix(path);
  if (gz) {
    pb::io::GzipOutputStream::Options options;
    options.format = pb::io::GzipOutputStream::GZIP;
    streams_->gzip = std::make_unique<pb::io::GzipOutputStream>(streams_->file.get(), options);
    streams_->out = streams_->gzip.get();
  }
  writeMessage(metadata);
}

ChakraFileWriter::~ChakraFileWriter() {
  if (!streams_) return;
  streams_->gzip.reset();
  streams_->file.reset();
  if (streams_->fd >= 0) ::close(streams_->fd);
}

void ChakraFileWriter::write(const ChakraProtoMsg::Node& node) { writeMessage(node); }

void ChakraFileWriter::writeMessage(const pb::Message& message) {
  if (!pb::util::SerializeDelimitedToZeroCopyStream(message, streams_->out)) {
    throw InputError(
        fmt::format("{}: write failed: {}", path_, std::strerror(streams_->file->GetErrno())));
  }
}

void ChakraFileWriter::close() {
  bool ok = true;
  if (streams_->gzip) ok = streams_->gzip->Close() && ok;
  ok = streams_->file->Close() && ok;
  const int err = streams_->file->GetErrno();
  streams_->gzip.reset();
  streams_->file.reset();
  streams_->fd = -1;  // FileOutputStream::Close closed it
  if (!ok) throw InputError(fmt::format("{}: write failed: {}", path_, std::strerror(err)));
}

}  // namespace tracetwin::core::chakra::detail
