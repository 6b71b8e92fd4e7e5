// Internals of the MJCF reader shared by mjcf_parser.cpp (bodies, joints), mjcf_equalities.cpp,
// mjcf_include.cpp (<include> files, element -> file:line), mjcf_elements.cpp (attributes with
// <default> classes, frame orientations, geom inertia) and mjcf_mesh.cpp (mesh assets).
#pragma once

#include <tinyxml2.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "clusterdyn/inertia.hpp"
#include "clusterdyn/urdf.hpp"

namespace clusterdyn::mjcf {

using tinyxml2::XMLElement;

enum class InertiaFromGeom { False, True, Auto };

/// <compiler> settings that change how numbers are read.
struct Compiler {
  bool degree = true;  ///< MJCF default: angles in degrees
  std::string eulerseq = "xyz";
  bool autolimits = true;
  InertiaFromGeom inertiaFromGeom = InertiaFromGeom::Auto;
  int inertiaGroupLo = 0, inertiaGroupHi = 5;
  std::string meshdir;     ///< <compiler meshdir> (else assetdir), MuJoCo's path rules
  bool strippath = false;  ///< <compiler strippath>: file names lose their directories
};

/// Attributes of one element kind (joint, geom, ...) in a <default> class.
using AttributeMap = std::map<std::string, std::string>;

/// Reader state: source name, the documents of the main file and its <include>d files,
/// compiler, default classes, and once-per-kind warnings.
class Context {
 public:
  /// source: the main file's name in messages; modelDir: the directory relative <include> and
  /// mesh file names start from (MuJoCo: the main model file's directory). filesAllowed false
  /// (a string without a base directory): every <include file> / <mesh file> is an error.
  Context(std::string source, std::string modelDir, bool filesAllowed = true)
      : source_(std::move(source)), modelDir_(std::move(modelDir)), filesAllowed_(filesAllowed) {}
  const std::string& source() const { return source_; }
  const std::string& modelDir() const { return modelDir_; }
  /// Fails at e unless this model may open files (its attribute 'file' names `file`).
  void requireFiles(const XMLElement* e, const std::string& file) const;
  Compiler compiler;

  [[noreturn]] void fail(const XMLElement* e, const std::string& what) const;
  /// Records "file:line: <tag>: what" once per key (the count of further occurrences at the end).
  void warnOnce(const XMLElement* e, const std::string& key, const std::string& what);
  /// Logs the warnings (spdlog, "clusterdyn") and returns them in order.
  std::vector<std::string> flushWarnings() const;

  // --- <include> (mjcf_include.cpp) ---
  /// Loads every <include> below root, recursively (MuJoCo's IncludeXML): file names relative
  /// to the main file's directory, else to the including file's; a file included twice (a
  /// cycle too) is an error. Must run before children() / fileOf().
  void expandIncludes(const XMLElement* root);
  /// The child elements of e (only those named `name` if given) with every <include>
  /// replaced by the included file's top-level elements, in document order.
  std::vector<const XMLElement*> children(const XMLElement* e, const char* name = nullptr) const;
  /// The file an element comes from (the main file or an included one), for file:line.
  const std::string& fileOf(const XMLElement* e) const;
  /// Warns once per element kind and attribute about attributes not in `known` (a
  /// space-separated list): MuJoCo attributes this reader does not use and that do not change
  /// the dynamics (those that would are rejected where they are read).
  void checkAttributes(const XMLElement* e, const char* known);

  /// Reads the <default> tree (nested classes inherit their parent's attributes).
  void readDefaults(const XMLElement* defaultElement, const std::string& parentClass);
  bool hasClass(const std::string& c) const { return classes_.count(c) > 0; }
  /// Attribute `attr` of element kind `tag` in class `cls`, or nullptr.
  const std::string* classAttribute(const std::string& cls, const std::string& tag,
                                    const std::string& attr) const;

 private:
  struct Warning {
    std::string text;
    int count = 0;
  };
  std::string source_, modelDir_;
  bool filesAllowed_ = true;
  std::vector<std::unique_ptr<tinyxml2::XMLDocument>> includedDocs_;
  std::map<const tinyxml2::XMLDocument*, std::string> docFile_;
  std::map<const XMLElement*, const XMLElement*> includeRoot_;  ///< <include> -> file root
  std::map<std::string, std::string> included_;  ///< canonical path -> "file:line" of <include>
  std::vector<std::string> includeStack_;        ///< canonical paths being expanded (cycles)
  void expandBelow(const XMLElement* e, const std::string& dir);
  void appendChildren(const XMLElement* e, const char* name,
                      std::vector<const XMLElement*>& out) const;
  std::map<std::string, std::map<std::string, AttributeMap>> classes_;
  std::map<std::string, Warning> warnings_;
  std::vector<std::string> warningOrder_;
};

/// An element with its defaults class resolved: attributes come from the element, else from
/// the class (its own `class`, else the enclosing childclass, else "main").
class Elem {
 public:
  Elem(const XMLElement* e, Context& ctx, const std::string& inheritedClass);
  const XMLElement* xml() const { return e_; }
  Context& ctx() const { return *ctx_; }
  const std::string& cls() const { return cls_; }
  const char* raw(const char* attr) const;
  bool has(const char* attr) const { return raw(attr) != nullptr; }
  [[noreturn]] void fail(const std::string& what) const { ctx_->fail(e_, what); }
  std::string str(const char* attr, const std::string& def) const;
  double number(const char* attr, double def) const;
  /// Exactly n numbers (fewer allowed when minCount < n; missing entries keep def's).
  std::vector<double> numbers(const char* attr, int n, const std::vector<double>& def,
                              int minCount = -1) const;
  Vec3 vec3(const char* attr, const Vec3& def) const;
  bool boolean(const char* attr, bool def) const;
  /// Frame from pos and one of quat / axisangle / euler / xyaxes / zaxis (MuJoCo's
  /// ResolveOrientation; angles follow <compiler angle eulerseq>).
  Transform frame() const;

 private:
  const XMLElement* e_;
  Context* ctx_;
  std::string cls_;
};

/// Rotation of a MuJoCo quaternion (w, x, y, z), normalized.
Mat3 quatToMatrix(double w, double x, double y, double z);
/// MuJoCo's mjuu_z2quat: the minimal rotation taking +z to vec.
Mat3 zAxisRotation(const Vec3& vec);

/// Mass properties of a mesh asset per unit density, as MuJoCo's mjCMesh::Process computes
/// them (mjcf_mesh.cpp): `measure` = volume (surface area for inertia="shell"), the centre of
/// mass and the inertia tensor about it per unit density, in the mesh file's frame after
/// scale / refpos / refquat.
struct MeshMass {
  double measure = 0.0;
  Vec3 com = Vec3::Zero();
  Mat3 inertia = Mat3::Zero();
};

/// The <asset><mesh> elements by name; a mesh's file is read when a geom needs its mass.
class MeshAssets {
 public:
  /// Records an <asset><mesh> (name: the attribute, else the file name without directory and
  /// extension, as MuJoCo).
  void add(const Elem& mesh);
  bool has(const std::string& name) const { return elems_.count(name) > 0; }
  /// Mass properties of mesh `name` (read and computed once); errors name `geom`'s file:line
  /// for an unknown mesh and the mesh element's for a bad file.
  const MeshMass& mass(const std::string& name, const Elem& geom);

 private:
  std::map<std::string, Elem> elems_;
  std::map<std::string, MeshMass> cache_;
};

/// Mass, centre of mass and inertia tensor (body axes, about the com) of a body's geoms as
/// MuJoCo infers them (mjCGeom::GetVolume / SetInertia, volume inertia; mesh geoms through
/// `meshes`). Geoms outside <compiler inertiagrouprange> are skipped; sdf geoms and primitives
/// fitted to a mesh with mass are rejected.
struct GeomInertia {
  double mass = 0.0;
  Vec3 com = Vec3::Zero();
  Mat3 inertia = Mat3::Zero();
  int geoms = 0;  ///< geoms that contributed
};
GeomInertia geomInertia(const std::vector<Elem>& geoms, const std::string& bodyName,
                        MeshAssets& meshes);

/// <inertial> of a body as a URDF inertial (pose of the principal frame, inertia in it).
UrdfInertial readInertial(const Elem& inertial, const std::string& bodyName);

/// What the body reader leaves for the equalities (mjcf_equalities.cpp).
struct Site {
  std::string link;  ///< link (MJCF body) carrying the site
  Transform X;       ///< site frame in the body frame
};
struct BodyTables {
  std::set<std::string> links, joints, loops;
  std::map<std::string, Transform> poses;  ///< world pose of each link at qpos0
  std::map<std::string, Site> sites;
  std::map<std::string, std::string> jointType;  ///< MJCF type per joint name
  int unnamed = 0;                               ///< counter of generated names
};

/// Reads one <equality> element's children into urdf's loops and mimics.
void readEqualities(const XMLElement* equality, Context& ctx, BodyTables& t, UrdfDescription& urdf);

}  // namespace clusterdyn::mjcf
