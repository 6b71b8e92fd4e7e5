// URDF / URDF+ XML reader (tinyxml2). Builds a UrdfDescription; semantic checks that need the
// whole tree (cycles, reachability) are done by the model builder.
#include <tinyxml2.h>

#include <Eigen/Eigenvalues>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "clusterdyn/urdf.hpp"
#include "core/log.hpp"
#include "model/xml_common.hpp"

namespace clusterdyn {
namespace {

using tinyxml2::XMLElement;

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const XMLElement* e, const std::string& what) const {
    detail::throwAtElement(source_, e, what);
  }

  std::string requiredString(const XMLElement* e, const char* attr) const {
    const char* s = e->Attribute(attr);
    if (!s) fail(e, std::string("missing attribute '") + attr + "'");
    if (std::string(s).empty()) fail(e, std::string("attribute '") + attr + "' is empty");
    return s;
  }

  static bool parseDouble(const std::string& text, double& out) {
    return detail::parseDouble(text, out);
  }

  double number(const XMLElement* e, const char* attr, bool required, double def) const {
    const char* s = e->Attribute(attr);
    if (!s) {
      if (required) fail(e, std::string("missing attribute '") + attr + "' (expected a number)");
      return def;
    }
    double x = 0.0;
    if (!parseDouble(s, x))
      fail(e, std::string("attribute '") + attr + "': expected a number, got '" + s + "'");
    if (!std::isfinite(x))
      fail(e, std::string("attribute '") + attr + "': expected a finite number, got '" + s + "'");
    return x;
  }

  Vec3 vector3(const XMLElement* e, const char* attr, const Vec3& def) const {
    const char* s = e->Attribute(attr);
    if (!s) return def;
    std::istringstream is(s);
    std::string tok;
    std::vector<double> vals;
    while (is >> tok) {
      double x = 0.0;
      if (!parseDouble(tok, x))
        fail(e, std::string("attribute '") + attr + "': expected 3 numbers, got '" + s + "'");
      if (!std::isfinite(x))
        fail(e, std::string("attribute '") + attr + "': expected finite numbers, got '" + s + "'");
      vals.push_back(x);
    }
    if (vals.size() != 3)
      fail(e, std::string("attribute '") + attr + "': expected 3 numbers, got '" + s + "'");
    return Vec3(vals[0], vals[1], vals[2]);
  }

  Transform origin(const XMLElement* parent) const {
    const XMLElement* o = parent->FirstChildElement("origin");
    if (!o) return Transform();
    const Vec3 xyz = vector3(o, "xyz", Vec3::Zero());
    const Vec3 rpy = vector3(o, "rpy", Vec3::Zero());
    return Transform(rpyToMatrix(rpy), xyz);
  }

  UrdfLink link(const XMLElement* e) const {
    UrdfLink l;
    l.name = requiredString(e, "name");
    l.line = e->GetLineNum();
    if (const XMLElement* in = e->FirstChildElement("inertial")) {
      l.inertial.present = true;
      l.inertial.origin = origin(in);
      const XMLElement* m = in->FirstChildElement("mass");
      if (!m) fail(in, "link '" + l.name + "': missing element <mass>");
      l.inertial.mass = number(m, "value", true, 0.0);
      if (l.inertial.mass < 0.0)
        fail(m, "link '" + l.name + "': attribute 'value': mass must be >= 0, got " +
                    std::to_string(l.inertial.mass));
      const XMLElement* I = in->FirstChildElement("inertia");
      if (!I) fail(in, "link '" + l.name + "': missing element <inertia>");
      const double ixx = number(I, "ixx", true, 0), ixy = number(I, "ixy", false, 0),
                   ixz = number(I, "ixz", false, 0), iyy = number(I, "iyy", true, 0),
                   iyz = number(I, "iyz", false, 0), izz = number(I, "izz", true, 0);
      Mat3 Ic;
      Ic << ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz;
      const double scale = std::max(1.0, Ic.cwiseAbs().maxCoeff());
      Eigen::SelfAdjointEigenSolver<Mat3> es(Ic, Eigen::EigenvaluesOnly);
      const Vec3& ev = es.eigenvalues();
      if (ev.minCoeff() < -1e-12 * scale)
        fail(I, "link '" + l.name +
                    "': inertia tensor is not positive semi-definite (eigenvalues " +
                    std::to_string(ev(0)) + ", " + std::to_string(ev(1)) + ", " +
                    std::to_string(ev(2)) + ")");
      // Principal moments of a rigid body satisfy I1 + I2 >= I3; several published models
      // violate it slightly, so this is a warning, not an error.
      if (ev(0) + ev(1) < ev(2) - 1e-9 * scale)
        log::warn("{}:{}: link '{}': inertia violates the triangle inequality I1 + I2 >= I3",
                  source_, I->GetLineNum(), l.name);
      l.inertial.inertia = Ic;
    }
    return l;
  }

  UrdfJoint joint(const XMLElement* e) const {
    UrdfJoint j;
    j.name = requiredString(e, "name");
    j.line = e->GetLineNum();
    const std::string type = requiredString(e, "type");
    j.continuous = type == "continuous";
    if (!jointTypeFromName(j.continuous ? "revolute" : type, j.type))
      fail(e, "attribute 'type': unknown joint type '" + type +
                  "' (expected revolute, continuous, prismatic, fixed, floating, planar or "
                  "spherical)");
    const XMLElement* p = e->FirstChildElement("parent");
    if (!p) fail(e, "missing element <parent>");
    j.parent = requiredString(p, "link");
    const XMLElement* c = e->FirstChildElement("child");
    if (!c) fail(e, "missing element <child>");
    j.child = requiredString(c, "link");
    j.origin = origin(e);
    if (const XMLElement* a = e->FirstChildElement("axis")) {
      j.axis = vector3(a, "xyz", Vec3::UnitX());
      if (j.axis.norm() < 1e-12 && j.type != JointType::Fixed && j.type != JointType::Floating &&
          j.type != JointType::Spherical)
        fail(a, "joint '" + j.name + "': attribute 'xyz': axis must be non-zero");
      if (j.axis.norm() >= 1e-12) j.axis.normalize();
    }
    if (const XMLElement* lim = e->FirstChildElement("limit")) {
      j.hasLimit = true;
      j.lower = number(lim, "lower", false, 0.0);
      j.upper = number(lim, "upper", false, 0.0);
      j.effort = number(lim, "effort", false, 0.0);
      j.velocity = number(lim, "velocity", false, 0.0);
      if (j.lower > j.upper)
        fail(lim, "joint '" + j.name + "': attribute 'lower' is greater than 'upper'");
    } else if ((j.type == JointType::Revolute && !j.continuous) || j.type == JointType::Prismatic) {
      // URDF requires <limit> for these; accept and treat as unlimited, but say so.
      log::debug("{}:{}: joint '{}' of type {} has no <limit>; treated as unlimited", source_,
                 j.line, j.name, type);
    }
    if (const char* ind = e->Attribute("independent")) {
      std::string s = ind;
      for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      j.independentGiven = true;
      if (s == "true" || s == "1")
        j.independent = true;
      else if (s == "false" || s == "0")
        j.independent = false;
      else
        fail(e, "attribute 'independent': expected 'true' or 'false', got '" + s + "'");
    }
    if (const XMLElement* m = e->FirstChildElement("mimic")) {
      j.mimic.present = true;
      j.mimic.joint = requiredString(m, "joint");
      j.mimic.multiplier = number(m, "multiplier", false, 1.0);
      j.mimic.offset = number(m, "offset", false, 0.0);
      j.mimic.line = m->GetLineNum();
    }
    return j;
  }

  UrdfCoupling coupling(const XMLElement* e) const {
    UrdfCoupling c;
    c.name = requiredString(e, "name");
    c.line = e->GetLineNum();
    if (const char* t = e->Attribute("type")) c.type = t;
    const XMLElement* ratio = e->FirstChildElement("ratio");
    const double commonRatio = ratio ? number(ratio, "value", true, 1.0) : 1.0;
    for (const XMLElement* p = e->FirstChildElement("predecessor"); p;
         p = p->NextSiblingElement("predecessor")) {
      UrdfCouplingTerm t;
      t.link = requiredString(p, "link");
      t.ratio = p->Attribute("ratio") ? number(p, "ratio", true, 1.0) : commonRatio;
      c.predecessors.push_back(t);
    }
    if (c.predecessors.empty()) fail(e, "missing element <predecessor>");
    if (!ratio && c.predecessors.size() == 1 &&
        !e->FirstChildElement("predecessor")->Attribute("ratio"))
      fail(e, "missing element <ratio> (or a 'ratio' attribute on <predecessor>)");
    const XMLElement* s = e->FirstChildElement("successor");
    if (!s) fail(e, "missing element <successor>");
    if (s->NextSiblingElement("successor")) fail(s, "a coupling has exactly one <successor>");
    c.successor = requiredString(s, "link");
    return c;
  }

  UrdfLoop loop(const XMLElement* e) const {
    UrdfLoop l;
    l.name = requiredString(e, "name");
    l.line = e->GetLineNum();
    const std::string type = requiredString(e, "type");
    if (type == "floating" || !jointTypeFromName(type == "continuous" ? "revolute" : type, l.type))
      fail(e, "attribute 'type': unknown loop joint type '" + type +
                  "' (expected revolute, continuous, prismatic, planar, spherical or fixed)");
    const XMLElement* p = e->FirstChildElement("predecessor");
    if (!p) fail(e, "missing element <predecessor>");
    const XMLElement* s = e->FirstChildElement("successor");
    if (!s) fail(e, "missing element <successor>");
    l.predecessor = requiredString(p, "link");
    l.successor = requiredString(s, "link");
    l.predecessorOrigin = origin(p);
    l.successorOrigin = origin(s);
    if (const char* c = e->Attribute("closure")) {
      const std::string closure = c;
      if (closure != "embed" && closure != "cut")
        fail(e, "attribute 'closure': '" + closure + "' (expected embed or cut)");
      l.cut = closure == "cut";
    }
    if (const XMLElement* a = e->FirstChildElement("axis")) {
      l.axis = vector3(a, "xyz", Vec3::UnitX());
      if (l.axis.norm() < 1e-12 && l.type != JointType::Fixed && l.type != JointType::Spherical)
        fail(a, "loop '" + l.name + "': attribute 'xyz': axis must be non-zero");
      if (l.axis.norm() >= 1e-12) l.axis.normalize();
    } else if (l.type != JointType::Fixed && l.type != JointType::Spherical) {
      fail(e, "missing element <axis> (required for a " + type + " loop joint)");
    }
    return l;
  }

  UrdfDescription read(tinyxml2::XMLDocument& doc) const {
    UrdfDescription d;
    d.source = source_;
    const XMLElement* robot = doc.FirstChildElement("robot");
    if (!robot) fail(doc.RootElement(), "the root element must be <robot>");
    if (const char* n = robot->Attribute("name")) d.robotName = n;
    std::set<std::string> linkNames, jointNames, chordNames;
    for (const XMLElement* e = robot->FirstChildElement(); e; e = e->NextSiblingElement()) {
      const std::string tag = e->Name();
      if (tag == "link") {
        UrdfLink l = link(e);
        if (!linkNames.insert(l.name).second) fail(e, "duplicate link name '" + l.name + "'");
        d.links.push_back(std::move(l));
      } else if (tag == "joint") {
        UrdfJoint j = joint(e);
        if (!jointNames.insert(j.name).second) fail(e, "duplicate joint name '" + j.name + "'");
        d.joints.push_back(std::move(j));
      } else if (tag == "coupling") {
        UrdfCoupling c = coupling(e);
        if (!chordNames.insert(c.name).second)
          fail(e, "duplicate coupling/loop name '" + c.name + "'");
        d.couplings.push_back(std::move(c));
      } else if (tag == "loop") {
        UrdfLoop l = loop(e);
        if (!chordNames.insert(l.name).second)
          fail(e, "duplicate coupling/loop name '" + l.name + "'");
        d.loops.push_back(std::move(l));
      } else if (tag == "material" || tag == "gazebo" || tag == "transmission") {
        // Standard URDF elements without dynamic meaning.
      } else {
        log::warn("{}:{}: ignoring unknown element <{}>", source_, e->GetLineNum(), tag);
      }
    }
    if (d.links.empty()) fail(robot, "the robot has no <link>");
    // Per-joint references.
    std::set<std::string> childOf;
    size_t jointIndex = 0;  // the <joint> elements were pushed to d.joints in document order
    for (const XMLElement* e = robot->FirstChildElement("joint"); e;
         e = e->NextSiblingElement("joint")) {
      const UrdfJoint* j = &d.joints[jointIndex++];
      if (!linkNames.count(j->parent))
        fail(e->FirstChildElement("parent"),
             "joint '" + j->name + "': attribute 'link': unknown parent link '" + j->parent + "'");
      if (!linkNames.count(j->child))
        fail(e->FirstChildElement("child"),
             "joint '" + j->name + "': attribute 'link': unknown child link '" + j->child + "'");
      if (j->parent == j->child)
        fail(e, "joint '" + j->name + "': parent and child are the same link '" + j->child + "'");
      if (!childOf.insert(j->child).second)
        fail(e, "joint '" + j->name + "': link '" + j->child +
                    "' already has a parent joint (a link can have only one parent joint)");
      if (j->mimic.present && !jointNames.count(j->mimic.joint))
        fail(e->FirstChildElement("mimic"), "joint '" + j->name +
                                                "': attribute 'joint': unknown mimic joint '" +
                                                j->mimic.joint + "'");
    }
    for (const auto& c : d.couplings) {
      for (const auto& t : c.predecessors)
        if (!linkNames.count(t.link))
          throw ModelError(d.where(c.line) + ": <coupling name=\"" + c.name +
                           "\">: <predecessor> attribute 'link': unknown link '" + t.link + "'");
      if (!linkNames.count(c.successor))
        throw ModelError(d.where(c.line) + ": <coupling name=\"" + c.name +
                         "\">: <successor> attribute 'link': unknown link '" + c.successor + "'");
    }
    for (const auto& l : d.loops) {
      if (!linkNames.count(l.predecessor))
        throw ModelError(d.where(l.line) + ": <loop name=\"" + l.name +
                         "\">: <predecessor> attribute 'link': unknown link '" + l.predecessor +
                         "'");
      if (!linkNames.count(l.successor))
        throw ModelError(d.where(l.line) + ": <loop name=\"" + l.name +
                         "\">: <successor> attribute 'link': unknown link '" + l.successor + "'");
    }
    return d;
  }

 private:
  std::string source_;
};

UrdfDescription parseDocument(tinyxml2::XMLDocument& doc, const std::string& source) {
  if (doc.Error()) {
    std::ostringstream os;
    os << source << ":" << doc.ErrorLineNum() << ": malformed XML: " << doc.ErrorStr();
    throw ModelError(os.str());
  }
  return Reader(source).read(doc);
}

}  // namespace

UrdfDescription parseUrdfFile(const std::string& path) {
  tinyxml2::XMLDocument doc;
  detail::loadXmlFile(doc, path);
  return parseDocument(doc, path);
}

UrdfDescription parseUrdfString(const std::string& xml, const std::string& sourceName) {
  tinyxml2::XMLDocument doc;
  doc.Parse(xml.c_str(), xml.size());
  return parseDocument(doc, sourceName);
}

}  // namespace clusterdyn
