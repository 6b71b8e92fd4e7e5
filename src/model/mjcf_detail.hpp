// Internals of the MJCF reader shared by mjcf_parser.cpp (bodies, joints, equalities) and
// mjcf_elements.cpp (attributes with <default> classes, frame orientations, geom inertia).
#pragma once

#include <tinyxml2.h>

#include <map>
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
};

/// Attributes of one element kind (joint, geom, ...) in a <default> class.
using AttributeMap = std::map<std::string, std::string>;

/// Reader state: source name, compiler, default classes, and once-per-kind warnings.
class Context {
 public:
  explicit Context(std::string source) : source_(std::move(source)) {}
  const std::string& source() const { return source_; }
  Compiler compiler;

  [[noreturn]] void fail(const XMLElement* e, const std::string& what) const;
  /// Logs "file:line: <tag>: what" once per key (the count of further occurrences at the end).
  void warnOnce(const XMLElement* e, const std::string& key, const std::string& what);
  void flushWarnings() const;
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
  std::string source_;
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

/// Mass, centre of mass and inertia tensor (body axes, about the com) of a body's geoms as
/// MuJoCo infers them (mjCGeom::GetVolume / SetInertia, volume inertia). Geoms outside
/// <compiler inertiagrouprange> are skipped; mesh / sdf geoms with mass are rejected.
struct GeomInertia {
  double mass = 0.0;
  Vec3 com = Vec3::Zero();
  Mat3 inertia = Mat3::Zero();
  int geoms = 0;  ///< geoms that contributed
};
GeomInertia geomInertia(const std::vector<Elem>& geoms, const std::string& bodyName);

/// <inertial> of a body as a URDF inertial (pose of the principal frame, inertia in it).
UrdfInertial readInertial(const Elem& inertial, const std::string& bodyName);

}  // namespace clusterdyn::mjcf
