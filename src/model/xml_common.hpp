// What the XML readers (URDF(+), MJCF) share: the ModelError of an element, "file:line: <tag
// name="...">: what", reading a file into a tinyxml2 document, and parsing one number.
#pragma once

#include <tinyxml2.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "clusterdyn/status.hpp"

namespace clusterdyn::detail {

[[noreturn]] inline void throwAtElement(const std::string& source, const tinyxml2::XMLElement* e,
                                        const std::string& what) {
  std::ostringstream os;
  os << source << ":" << (e ? e->GetLineNum() : 0) << ": ";
  if (e) {
    os << "<" << e->Name();
    if (const char* n = e->Attribute("name")) os << " name=\"" << n << "\"";
    os << ">: ";
  }
  os << what;
  throw ModelError(os.str());
}

/// Loads path into doc; a file that cannot be read is a ModelError naming it (a file that is
/// not well-formed XML is left to the reader, which names the line).
inline void loadXmlFile(tinyxml2::XMLDocument& doc, const std::string& path) {
  const tinyxml2::XMLError err = doc.LoadFile(path.c_str());
  if (err == tinyxml2::XML_ERROR_FILE_NOT_FOUND ||
      err == tinyxml2::XML_ERROR_FILE_COULD_NOT_BE_OPENED ||
      err == tinyxml2::XML_ERROR_FILE_READ_ERROR)
    throw ModelError(path + ": cannot read file (" + std::string(doc.ErrorName()) + ")");
}

/// One floating-point number, surrounding white space allowed after it; false for anything else.
inline bool parseDouble(const std::string& text, double& out) {
  const char* begin = text.c_str();
  char* end = nullptr;
  out = std::strtod(begin, &end);
  if (end == begin) return false;
  while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') ++end;
  return *end == '\0';
}

}  // namespace clusterdyn::detail
