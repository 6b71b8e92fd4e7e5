// MJCF reader (tinyxml2): <mujoco> bodies, joints and equalities into a UrdfDescription (see
// include/clusterdyn/mjcf.hpp and docs/mjcf.md for the mapping).
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "clusterdyn/mjcf.hpp"
#include "core/log.hpp"
#include "model/mjcf_detail.hpp"
#include "model/xml_common.hpp"

namespace clusterdyn {
namespace mjcf {
// loop_coordinates.cpp: marks the dependent joints of the loops (independent="false") and the
// ball joints chosen independent.
void chooseDependentJoints(UrdfDescription& urdf, const std::set<std::string>& actuated);

namespace {

constexpr double kPi = 3.14159265358979323846;
const char* const kWorld = "world";

class Reader {
 public:
  Reader(const std::string& source, const std::string& modelDir, bool filesAllowed)
      : ctx_(source, modelDir, filesAllowed) {}

  MjcfDescription read(const tinyxml2::XMLDocument& doc) {
    out_.urdf.source = ctx_.source();
    const XMLElement* root = doc.RootElement();
    if (!root || std::string(root->Name()) != "mujoco")
      ctx_.fail(root, "the root element must be <mujoco>");
    if (const char* n = root->Attribute("model")) out_.urdf.robotName = n;
    ctx_.expandIncludes(root);  // <include> anywhere, before anything is read (MuJoCo)
    // Settings first: they change how everything else reads.
    for (const XMLElement* e : ctx_.children(root, "compiler")) compiler(e);
    for (const XMLElement* e : ctx_.children(root, "default")) ctx_.readDefaults(e, "");
    for (const XMLElement* e : ctx_.children(root, "asset")) assets(e);
    UrdfLink world;
    world.name = kWorld;
    world.line = root->GetLineNum();
    out_.urdf.links.push_back(world);
    t_.links.insert(kWorld);
    t_.poses[kWorld] = Transform();
    for (const XMLElement* e : ctx_.children(root)) {
      const std::string tag = e->Name();
      if (tag == "compiler" || tag == "default" || tag == "asset") continue;
      if (tag == "worldbody") {
        worldBody(e);
      } else if (tag == "option") {
        option(e);
      } else if (tag == "actuator") {
        actuators(e);
      } else if (tag == "equality" || tag == "tendon" || tag == "deformable" ||
                 tag == "extension") {
        // equality: after the bodies; the others change the dynamics or the model
        if (tag != "equality") {
          if (tag == "tendon" && !tendonsWithoutDynamics(e))
            ctx_.fail(e, "tendons with stiffness, damping or equalities are not supported");
          if (tag == "tendon")
            ctx_.warnOnce(e, tag,
                          "ignored (tendons without stiffness or damping act through "
                          "actuators and limits only)");
          else
            ctx_.fail(e, "<" + tag + "> is not supported (it changes the model)");
        }
      } else {
        // visual, statistic, contact, sensor, keyframe, size, custom: no dynamics
        ctx_.warnOnce(e, tag, "ignored (no effect on the dynamics)");
      }
    }
    for (const XMLElement* e : ctx_.children(root, "equality"))
      readEqualities(e, ctx_, t_, out_.urdf);
    if (passiveDisabled_)
      for (UrdfJoint& j : out_.urdf.joints) j.stiffness = j.damping = 0.0;
    chooseDependentJoints(out_.urdf, actuated_);
    out_.warnings = ctx_.flushWarnings();
    return std::move(out_);
  }

 private:
  Context ctx_;
  MjcfDescription out_;
  BodyTables t_;
  MeshAssets meshes_;
  std::set<std::string> staticLinks_{kWorld};  ///< links welded to the world
  std::set<std::string> actuated_;
  bool passiveDisabled_ = false;  ///< <option><flag passive="disable">

  void compiler(const XMLElement* e) {
    Elem c(e, ctx_, "");
    Compiler& k = ctx_.compiler;
    const std::string angle = c.str("angle", "degree");
    if (angle != "degree" && angle != "radian")
      c.fail("attribute 'angle': expected degree or radian, got '" + angle + "'");
    k.degree = angle == "degree";
    k.eulerseq = c.str("eulerseq", k.eulerseq);
    if (k.eulerseq.size() != 3 || k.eulerseq.find_first_not_of("xyzXYZ") != std::string::npos)
      c.fail("attribute 'eulerseq': expected 3 characters from xyzXYZ, got '" + k.eulerseq + "'");
    k.autolimits = c.boolean("autolimits", k.autolimits);
    const std::string ifg = c.str("inertiafromgeom", "auto");
    if (ifg == "true")
      k.inertiaFromGeom = InertiaFromGeom::True;
    else if (ifg == "false")
      k.inertiaFromGeom = InertiaFromGeom::False;
    else if (ifg == "auto")
      k.inertiaFromGeom = InertiaFromGeom::Auto;
    else
      c.fail("attribute 'inertiafromgeom': expected false, true or auto, got '" + ifg + "'");
    const auto range = c.numbers("inertiagrouprange", 2, {0.0, 5.0});
    k.inertiaGroupLo = static_cast<int>(range[0]);
    k.inertiaGroupHi = static_cast<int>(range[1]);
    if (c.str("coordinate", "local") != "local")
      c.fail("attribute 'coordinate': only 'local' is supported (MuJoCo too)");
    // mesh files: meshdir, else assetdir (MuJoCo: meshdir takes precedence)
    if (c.has("meshdir"))
      k.meshdir = c.str("meshdir", "");
    else if (c.has("assetdir"))
      k.meshdir = c.str("assetdir", "");
    k.strippath = c.boolean("strippath", k.strippath);
    if (c.number("boundmass", 0.0) > 0.0 || c.number("boundinertia", 0.0) > 0.0 ||
        c.number("settotalmass", -1.0) > 0.0 || c.boolean("balanceinertia", false))
      c.fail(
          "boundmass, boundinertia, settotalmass and balanceinertia change the inertias "
          "and are not supported");
  }

  void option(const XMLElement* e) {
    Elem o(e, ctx_, "");
    if (o.has("gravity")) {  // applied by the builders (ModelOptions::fileGravity)
      out_.gravityGiven = out_.urdf.gravityGiven = true;
      out_.gravity = out_.urdf.gravity = o.vec3("gravity", out_.gravity);
    }
    if (o.number("density", 0.0) != 0.0 || o.number("viscosity", 0.0) != 0.0 || o.has("wind"))
      o.fail("fluid forces (density, viscosity, wind) are not supported");
    for (const XMLElement* f : ctx_.children(e, "flag")) {
      if (f->Attribute("gravity") && std::string(f->Attribute("gravity")) == "disable") {
        out_.gravityGiven = out_.urdf.gravityGiven = true;  // MuJoCo: no gravity at all
        out_.gravity = out_.urdf.gravity = Vec3::Zero();
      }
      if (f->Attribute("passive") && std::string(f->Attribute("passive")) == "disable")
        passiveDisabled_ = true;  // MuJoCo: no joint springs and dampers
    }
  }

  /// <asset>: meshes are kept for the geoms' inertia; the rest (materials, textures,
  /// height fields, skins, models) has no dynamics.
  void assets(const XMLElement* a) {
    for (const XMLElement* c : ctx_.children(a)) {
      const std::string tag = c->Name();
      if (tag == "mesh")
        meshes_.add(Elem(c, ctx_, ""));
      else
        ctx_.warnOnce(c, "asset:" + tag, "ignored (no effect on the dynamics)");
    }
  }

  bool tendonsWithoutDynamics(const XMLElement* t) const {
    for (const XMLElement* e : ctx_.children(t)) {
      Elem x(e, const_cast<Context&>(ctx_), "");
      if (x.number("stiffness", 0.0) != 0.0 || x.number("damping", 0.0) != 0.0) return false;
    }
    return true;
  }

  void actuators(const XMLElement* a) {
    int n = 0;
    for (const XMLElement* e : ctx_.children(a)) {
      ++n;
      if (const char* j = e->Attribute("joint")) actuated_.insert(j);
    }
    if (n)
      ctx_.warnOnce(a, "actuator",
                    "ignored (" + std::to_string(n) +
                        " actuators; clusterdyn takes joint torques as inputs; actuated "
                        "joints are preferred as independent coordinates of loops)");
  }

  void worldBody(const XMLElement* w) {
    for (const XMLElement* e : ctx_.children(w)) {
      const std::string tag = e->Name();
      if (tag == "body") {
        body(e, kWorld, "");
      } else if (tag == "frame") {
        std::vector<FramedBody> bodies;
        frameChildren(e, Transform(), "", kWorld, nullptr, bodies);
        for (const FramedBody& fb : bodies) body(fb.e, kWorld, fb.cls, fb.F);
      } else if (tag == "site") {
        site(Elem(e, ctx_, ""), kWorld);
      } else if (tag == "joint" || tag == "freejoint" || tag == "inertial") {
        ctx_.fail(e, "the world body cannot have <" + tag + ">");
      } else {
        otherChild(e);
      }
    }
  }

  /// Children other than body, joint, geom, site, inertial.
  void otherChild(const XMLElement* e) {
    const std::string tag = e->Name();
    if (tag == "geom") return;  // static geometry: no dynamics (moving geoms: see body())
    if (tag == "replicate" || tag == "composite" || tag == "flexcomp" || tag == "attach" ||
        tag == "plugin")
      ctx_.fail(e, "<" + tag + "> is not supported by clusterdyn's MJCF reader");
    ctx_.warnOnce(e, "child:" + tag, "ignored (no effect on the dynamics)");
  }

  void site(const Elem& s, const std::string& link, const Transform& F = Transform()) {
    if (const char* n = s.xml()->Attribute("name")) t_.sites[n] = Site{link, F * s.frame()};
  }

  /// A body inside <frame> elements: F = the frames' composed pose in the parent body.
  struct FramedBody {
    const XMLElement* e;
    Transform F;
    std::string cls;  ///< childclass in effect
  };

  /// Children of <frame> f (pose F * frame pose in `link`'s frame, MuJoCo's <frame>): bodies
  /// go to `bodies`, sites are placed, nested frames recursed. Geoms with mass go to `geoms`
  /// (nullptr: the world, static): body() rejects them (file:line) when the body moves.
  void frameChildren(const XMLElement* f, const Transform& F, const std::string& cls,
                     const std::string& link, std::vector<Elem>* geoms,
                     std::vector<FramedBody>& bodies) {
    std::string cc = cls;
    if (const char* c = f->Attribute("childclass")) {
      cc = c;
      if (!ctx_.hasClass(cc)) ctx_.fail(f, "attribute 'childclass': unknown class '" + cc + "'");
    }
    ctx_.checkAttributes(f, "name class childclass pos quat axisangle euler xyaxes zaxis");
    const Transform Ft = F * Elem(f, ctx_, cls).frame();
    for (const XMLElement* c : ctx_.children(f)) {
      const std::string tag = c->Name();
      if (tag == "body") {
        bodies.push_back(FramedBody{c, Ft, cc});
      } else if (tag == "frame") {
        frameChildren(c, Ft, cc, link, geoms, bodies);
      } else if (tag == "site") {
        site(Elem(c, ctx_, cc), link, Ft);
      } else if (tag == "geom") {
        const Elem g(c, ctx_, cc);
        if (geoms && !(g.number("mass", -1.0) == 0.0 || g.number("density", 1000.0) == 0.0))
          geoms->push_back(g);  // rejected by body() when the body moves
      } else if (tag == "joint" || tag == "freejoint" || tag == "inertial") {
        ctx_.fail(c, "<" + tag + "> cannot be inside a <frame>");
      } else {
        otherChild(c);
      }
    }
  }

  std::string uniqueName(const XMLElement* e, const char* prefix, std::set<std::string>& names) {
    std::string name;
    if (const char* n = e->Attribute("name")) {
      name = n;
      if (name.empty()) ctx_.fail(e, "attribute 'name' is empty");
      if (!names.insert(name).second)
        ctx_.fail(e, std::string("duplicate ") + prefix + " name '" + name + "'");
      if (name.find('#') != std::string::npos)
        ctx_.fail(e, "attribute 'name': '#' is reserved for the reader's intermediate frames");
      return name;
    }
    do name = std::string(prefix) + "#" + std::to_string(t_.unnamed++);
    while (!names.insert(name).second);
    return name;
  }

  void body(const XMLElement* e, const std::string& parentLink, const std::string& inherited,
            const Transform& F = Transform()) {
    std::string cc = inherited;
    if (const char* c = e->Attribute("childclass")) {
      cc = c;
      if (!ctx_.hasClass(cc)) ctx_.fail(e, "attribute 'childclass': unknown class '" + cc + "'");
    }
    Elem b(e, ctx_, "");
    ctx_.checkAttributes(e, "name childclass pos quat axisangle euler xyaxes zaxis mocap gravcomp");
    const std::string name = uniqueName(e, "body", t_.links);
    if (b.boolean("mocap", false))
      ctx_.fail(e, "attribute 'mocap': mocap bodies are not supported");
    if (b.number("gravcomp", 0.0) != 0.0)
      ctx_.fail(e, "attribute 'gravcomp': gravity compensation is not supported");
    const Transform X = F * b.frame();  // F: enclosing <frame>s
    t_.poses[name] = t_.poses.at(parentLink) * X;

    UrdfLink link;
    link.name = name;
    link.line = e->GetLineNum();
    std::vector<const XMLElement*> jointElems;
    std::vector<FramedBody> children;
    std::vector<Elem> geoms, framedGeoms;
    const XMLElement* inertial = nullptr;
    for (const XMLElement* c : ctx_.children(e)) {
      const std::string tag = c->Name();
      if (tag == "joint" || tag == "freejoint")
        jointElems.push_back(c);
      else if (tag == "body")
        children.push_back(FramedBody{c, Transform(), cc});
      else if (tag == "frame")
        frameChildren(c, Transform(), cc, name, &framedGeoms, children);
      else if (tag == "geom")
        geoms.emplace_back(c, ctx_, cc);
      else if (tag == "inertial") {
        if (inertial) ctx_.fail(c, "a body has at most one <inertial>");
        inertial = c;
      } else if (tag == "site")
        site(Elem(c, ctx_, cc), name);
      else
        otherChild(c);
    }
    const InertiaFromGeom ifg = ctx_.compiler.inertiaFromGeom;
    // A body welded to the world (no joint up to it) has no dynamic effect: skip its inertia
    // (its mesh geoms need no mesh file).
    const bool isStatic = jointElems.empty() && staticLinks_.count(parentLink);
    if (isStatic) {
      staticLinks_.insert(name);
    } else if (inertial && ifg != InertiaFromGeom::True) {
      ctx_.checkAttributes(inertial,
                           "pos quat axisangle euler xyaxes zaxis mass diaginertia fullinertia");
      link.inertial = readInertial(Elem(inertial, ctx_, cc), name);
    } else if (ifg != InertiaFromGeom::False) {
      if (!framedGeoms.empty())  // the body's inertia would come from them
        framedGeoms[0].fail(
            "a geom with mass inside a <frame> of a moving body is not supported (move it to "
            "the body, or give the body an <inertial> and the geom mass=\"0\")");
      const GeomInertia gi = geomInertia(geoms, name, meshes_);
      if (gi.mass > 0.0) {
        link.inertial.present = true;
        link.inertial.mass = gi.mass;
        link.inertial.origin = Transform(Mat3::Identity(), gi.com);
        link.inertial.inertia = gi.inertia;
      }
    }
    out_.urdf.links.push_back(link);

    // Joints: chained through massless intermediate links "<body>#<joint>" when a body has
    // several joints or a joint pos != 0 (MuJoCo applies a body's joints in order, each about
    // its own anchor in the body frame; clusterdyn joints act at the child frame origin).
    std::string prev = parentLink;
    Transform origin = X;
    for (size_t k = 0; k < jointElems.size(); ++k) {
      const XMLElement* je = jointElems[k];
      Elem j(je, ctx_, cc);
      const bool freeTag = std::string(je->Name()) == "freejoint";
      ctx_.checkAttributes(je,
                           "name class type pos axis ref springref stiffness damping armature "
                           "range limited frictionloss springdamper actuatorgravcomp group "
                           "solreflimit solimplimit solreffriction solimpfriction margin "
                           "actuatorfrcrange actuatorfrclimited user align");
      const std::string type = freeTag ? "free" : j.str("type", "hinge");
      const std::string jname = uniqueName(je, "joint", t_.joints);
      UrdfJoint uj;
      uj.name = jname;
      uj.line = je->GetLineNum();
      uj.parent = prev;
      Vec3 pos = Vec3::Zero();
      if (type == "free") {
        if (parentLink != kWorld || jointElems.size() > 1)
          j.fail("a free joint must be the only joint of a child of <worldbody>");
        uj.type = JointType::Floating;
        origin = Transform();  // q = the body's world pose, as MuJoCo's qpos
        if (!freeTag && j.number("stiffness", 0.0) != 0.0)
          j.fail("attribute 'stiffness': springs on free joints are not supported");
        MjcfJointDynamics d;
        d.joint = jname;
        d.line = uj.line;
        d.damping = freeTag ? 0.0 : j.number("damping", 0.0);
        d.armature = freeTag ? 0.0 : j.number("armature", 0.0);
        uj.damping = d.damping;
        uj.armature = d.armature;
        if (d.damping != 0.0 || d.armature != 0.0) out_.jointDynamics.push_back(d);
      } else if (type == "hinge" || type == "slide" || type == "ball") {
        pos = j.vec3("pos", Vec3::Zero());
        if (type != "ball") {
          uj.axis = j.vec3("axis", Vec3::UnitZ());
          if (uj.axis.norm() < 1e-14) j.fail("attribute 'axis': axis too small");
          uj.axis.normalize();
        }
        uj.type = type == "ball"    ? JointType::Spherical
                  : type == "slide" ? JointType::Prismatic
                                    : JointType::Revolute;
        uj.continuous = type == "hinge";
        jointDetails(j, type, uj);
      } else {
        j.fail("attribute 'type': unknown joint type '" + type +
               "' (expected free, ball, slide or hinge)");
      }
      t_.jointType[jname] = type;
      origin = origin * Transform(Mat3::Identity(), pos);
      uj.origin = origin;
      const bool last = k + 1 == jointElems.size();
      uj.child = last && pos.isZero() ? name : name + "#" + jname;
      if (uj.child != name) {
        UrdfLink mid;
        mid.name = uj.child;
        mid.line = uj.line;
        out_.urdf.links.push_back(mid);
      }
      out_.urdf.joints.push_back(uj);
      prev = uj.child;
      origin = Transform(Mat3::Identity(), -pos);
    }
    if (prev != name) {
      UrdfJoint fixed;
      fixed.name = name + "#fixed";
      fixed.type = JointType::Fixed;
      fixed.parent = prev;
      fixed.child = name;
      fixed.origin = origin;
      fixed.line = link.line;
      out_.urdf.joints.push_back(fixed);
    }
    for (const FramedBody& c : children) body(c.e, name, c.cls, c.F);
  }

  /// Limits, reference and passive parameters of a hinge / slide / ball joint.
  void jointDetails(const Elem& j, const std::string& type, UrdfJoint& uj) {
    const double unit = type == "hinge" && ctx_.compiler.degree ? kPi / 180.0 : 1.0;
    const double ref = type == "ball" ? 0.0 : j.number("ref", 0.0) * unit;
    if (type == "ball" && j.has("ref")) j.fail("attribute 'ref': not defined for ball joints");
    const std::string limited = j.str("limited", "auto");
    const bool hasRange = j.has("range");
    bool isLimited = limited == "true";
    if (limited == "auto") {
      if (hasRange && !ctx_.compiler.autolimits)
        j.fail("attribute 'range' without limited=\"true\" while <compiler autolimits=\"false\">");
      isLimited = hasRange;
    } else if (limited != "true" && limited != "false") {
      j.fail("attribute 'limited': expected true, false or auto, got '" + limited + "'");
    }
    if (isLimited && type != "ball") {
      const auto r = j.numbers("range", 2, {0.0, 0.0});
      if (r[0] >= r[1]) j.fail("attribute 'range': range[0] must be smaller than range[1]");
      uj.hasLimit = true;
      uj.continuous = false;
      uj.lower = r[0] * unit - ref;  // clusterdyn q = qpos - ref
      uj.upper = r[1] * unit - ref;
    } else if (isLimited) {
      ctx_.warnOnce(j.xml(), "ballrange", "attribute 'range': ball-joint cone limits ignored");
    }
    if (j.has("springdamper")) j.fail("attribute 'springdamper': not supported");
    if (j.boolean("actuatorgravcomp", false))
      j.fail("attribute 'actuatorgravcomp': gravity compensation is not supported");
    if (j.number("frictionloss", 0.0) != 0.0)
      ctx_.warnOnce(j.xml(), "frictionloss",
                    "attribute 'frictionloss': dry friction is a constraint of MuJoCo's solver, "
                    "ignored by clusterdyn");
    MjcfJointDynamics d;
    d.joint = uj.name;
    d.line = uj.line;
    d.stiffness = j.number("stiffness", 0.0);
    d.damping = j.number("damping", 0.0);
    d.armature = j.number("armature", 0.0);
    if (d.stiffness < 0.0 || d.damping < 0.0 || d.armature < 0.0)
      j.fail("stiffness, damping and armature must be >= 0");
    d.springPosition = type == "ball" ? 0.0 : j.number("springref", 0.0) * unit - ref;
    uj.armature = d.armature;  // applied by the algorithms (ModelOptions::jointDynamics)
    uj.stiffness = d.stiffness;
    uj.springPosition = d.springPosition;
    uj.damping = d.damping;
    if (d.stiffness != 0.0 || d.damping != 0.0 || d.armature != 0.0)
      out_.jointDynamics.push_back(d);
  }
};

MjcfDescription parseDocument(tinyxml2::XMLDocument& doc, const std::string& source,
                              const std::string& modelDir, bool filesAllowed) {
  if (doc.Error())
    throw ModelError(source + ":" + std::to_string(doc.ErrorLineNum()) +
                     ": malformed XML: " + doc.ErrorStr());
  return Reader(source, modelDir, filesAllowed).read(doc);
}

/// The directory of a file name ("" for a bare name: the working directory).
std::string directoryOf(const std::string& path) {
  const size_t k = path.find_last_of('/');
  return k == std::string::npos ? std::string() : path.substr(0, k + 1);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace
}  // namespace mjcf

MjcfDescription parseMjcfFile(const std::string& path) {
  tinyxml2::XMLDocument doc;
  detail::loadXmlFile(doc, path);
  return mjcf::parseDocument(doc, path, mjcf::directoryOf(path), true);
}

MjcfDescription parseMjcfString(const std::string& xml, const std::string& sourceName,
                                const std::string& baseDirectory) {
  tinyxml2::XMLDocument doc;
  doc.Parse(xml.c_str(), xml.size());
  std::string dir = baseDirectory;
  if (!dir.empty() && dir.back() != '/') dir += '/';
  return mjcf::parseDocument(doc, sourceName, dir, !baseDirectory.empty());
}

bool isMjcfFile(const std::string& path) {
  const std::string p = mjcf::lower(path);
  if (mjcf::endsWith(p, ".mjcf")) return true;
  if (mjcf::endsWith(p, ".urdf")) return false;
  // *.xml and others: by the root element (a URDF named *.xml has <robot>); an unreadable or
  // malformed *.xml goes to the MJCF reader, which reports it.
  tinyxml2::XMLDocument doc;
  if (doc.LoadFile(path.c_str()) != tinyxml2::XML_SUCCESS || !doc.RootElement())
    return mjcf::endsWith(p, ".xml");
  return std::string(doc.RootElement()->Name()) == "mujoco";
}

namespace {
UrdfDescription takeWarnings(MjcfDescription&& d, std::vector<std::string>* warnings) {
  if (warnings) *warnings = std::move(d.warnings);
  return std::move(d.urdf);
}
}  // namespace

UrdfDescription parseModelFile(const std::string& path, std::vector<std::string>* warnings) {
  if (warnings) warnings->clear();
  return isMjcfFile(path) ? takeWarnings(parseMjcfFile(path), warnings) : parseUrdfFile(path);
}

UrdfDescription parseModelString(const std::string& xml, const std::string& sourceName,
                                 std::vector<std::string>* warnings,
                                 const std::string& baseDirectory) {
  if (warnings) warnings->clear();
  tinyxml2::XMLDocument doc;
  doc.Parse(xml.c_str(), xml.size());
  if (!doc.Error() && doc.RootElement() && std::string(doc.RootElement()->Name()) == "mujoco")
    return takeWarnings(parseMjcfString(xml, sourceName, baseDirectory), warnings);
  return parseUrdfString(xml, sourceName);
}

}  // namespace clusterdyn
