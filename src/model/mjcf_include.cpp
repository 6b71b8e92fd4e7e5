// MJCF <include file="...">: the included file's top-level elements replace the <include>
// element (MuJoCo's IncludeXML, XML reference "include"). Every element keeps its own file and
// line for error messages (Context::fileOf): the included documents stay alive in the Context
// and are read in place, never copied into the main document (a copy would lose the lines).
#include <filesystem>
#include <system_error>

#include "model/mjcf_detail.hpp"
#include "model/xml_common.hpp"

namespace clusterdyn::mjcf {
namespace {

bool isAbsolute(const std::string& p) { return !p.empty() && p[0] == '/'; }

bool isFile(const std::string& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

std::string canonicalPath(const std::string& p) {
  std::error_code ec;
  const auto c = std::filesystem::weakly_canonical(p, ec);
  return ec ? p : c.string();
}

std::string directoryPart(const std::string& p) {
  const size_t k = p.find_last_of('/');
  return k == std::string::npos ? std::string() : p.substr(0, k + 1);
}

}  // namespace

void Context::expandIncludes(const XMLElement* root) {
  docFile_[root->GetDocument()] = source_;
  const std::string main = canonicalPath(source_);
  includeStack_ = {main};
  included_[main] = source_;
  expandBelow(root, "");
}

// dir: the including file's directory relative to the main file's directory (or absolute).
void Context::expandBelow(const XMLElement* e, const std::string& dir) {
  for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
    if (std::string(c->Name()) != "include") {
      expandBelow(c, dir);
      continue;
    }
    if (!c->NoChildren()) fail(c, "an <include> element cannot have children");
    const char* f = c->Attribute("file");
    if (!f || !*f) fail(c, "missing attribute 'file'");
    const std::string file = f;
    requireFiles(c, file);
    // MuJoCo: relative to the main model file's directory; else (newer rule) relative to the
    // including file's directory.
    std::string rel = file;
    std::string path = isAbsolute(file) ? file : modelDir_ + file;
    if (!isFile(path) && !isAbsolute(file) && !dir.empty()) {
      rel = dir + file;
      path = isAbsolute(rel) ? rel : modelDir_ + rel;
    }
    if (!isFile(path))
      fail(c, "attribute 'file': cannot read '" + file +
                  "' (looked relative to the main file's "
                  "directory '" +
                  (modelDir_.empty() ? "." : modelDir_) + "'" +
                  (dir.empty() ? std::string() : " and to the including file's '" + dir + "'") +
                  ")");
    const std::string canon = canonicalPath(path);
    for (size_t k = 0; k < includeStack_.size(); ++k) {
      if (includeStack_[k] != canon) continue;
      std::string cycle;
      for (size_t i = k; i < includeStack_.size(); ++i)
        cycle += std::filesystem::path(includeStack_[i]).filename().string() + " -> ";
      fail(c, "include cycle: " + cycle + std::filesystem::path(canon).filename().string());
    }
    auto seen = included_.find(canon);
    if (seen != included_.end())
      fail(c, "file '" + file + "' is already included (" + seen->second +
                  "); MuJoCo includes a file at most once");
    auto doc = std::make_unique<tinyxml2::XMLDocument>();
    detail::loadXmlFile(*doc, path);
    const std::string at = fileOf(c) + ":" + std::to_string(c->GetLineNum());
    if (doc->Error())
      throw ModelError(path + ":" + std::to_string(doc->ErrorLineNum()) +
                       ": malformed XML: " + doc->ErrorStr() + " (included at " + at + ")");
    const XMLElement* root = doc->RootElement();
    if (!root || !root->FirstChildElement())
      fail(c, "file '" + file + "' has no element below its top-level element");
    docFile_[doc.get()] = path;
    includeRoot_[c] = root;
    included_[canon] = "included at " + at;
    includedDocs_.push_back(std::move(doc));
    includeStack_.push_back(canon);
    expandBelow(root, directoryPart(rel));
    includeStack_.pop_back();
  }
}

std::vector<const XMLElement*> Context::children(const XMLElement* e, const char* name) const {
  std::vector<const XMLElement*> out;
  appendChildren(e, name, out);
  return out;
}

void Context::appendChildren(const XMLElement* e, const char* name,
                             std::vector<const XMLElement*>& out) const {
  for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
    auto inc = includeRoot_.find(c);
    if (inc != includeRoot_.end())
      appendChildren(inc->second, name, out);
    else if (!name || std::string(c->Name()) == name)
      out.push_back(c);
  }
}

void Context::requireFiles(const XMLElement* e, const std::string& file) const {
  if (filesAllowed_) return;
  fail(e, "attribute 'file' ('" + file +
              "'): a model read from a string opens no files; pass the directory its file "
              "names are relative to (parseMjcfString baseDirectory), or load the model from "
              "its file");
}

const std::string& Context::fileOf(const XMLElement* e) const {
  auto it = e ? docFile_.find(e->GetDocument()) : docFile_.end();
  return it == docFile_.end() ? source_ : it->second;
}

}  // namespace clusterdyn::mjcf
