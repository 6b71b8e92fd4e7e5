// MJCF <equality>: connect -> spherical <loop>, weld -> fixed <loop>, joint with a linear
// polycoef -> <mimic> (docs/mjcf.md section 2). Runs after the bodies (their qpos0 poses and
// sites are in BodyTables).
#include "model/mjcf_detail.hpp"

namespace clusterdyn::mjcf {
namespace {

const char* const kWorld = "world";

class Equalities {
 public:
  Equalities(Context& ctx, BodyTables& t, UrdfDescription& urdf) : ctx_(ctx), t_(t), urdf_(urdf) {}

  std::string bodyRef(const Elem& q, const char* attr, bool required) {
    if (!q.has(attr)) {
      if (required) q.fail(std::string("missing attribute '") + attr + "'");
      return kWorld;
    }
    const std::string b = q.str(attr, "");
    if (b == kWorld) return b;
    if (!t_.links.count(b) || b.find('#') != std::string::npos)
      q.fail(std::string("attribute '") + attr + "': unknown body '" + b + "'");
    return b;
  }

  const Site& siteRef(const Elem& q, const char* attr) {
    const std::string s = q.str(attr, "");
    auto it = t_.sites.find(s);
    if (it == t_.sites.end())
      q.fail(std::string("attribute '") + attr + "': unknown site '" + s + "'");
    return it->second;
  }

  void read(const XMLElement* eq) {
    for (const XMLElement* e : ctx_.children(eq)) {
      const std::string tag = e->Name();
      Elem q(e, ctx_, "");
      ctx_.checkAttributes(e,
                           "name class active solref solimp body1 body2 anchor relpose "
                           "torquescale site1 site2 joint1 joint2 polycoef");
      if (!q.boolean("active", true)) {
        ctx_.warnOnce(e, "inactive", "active=\"false\": inactive equality ignored");
        continue;
      }
      if (tag == "connect" || tag == "weld")
        loop(q, tag);
      else if (tag == "joint")
        jointCoupling(q);
      else
        ctx_.fail(e, "equality <" + tag + "> is not supported (connect, weld, joint are)");
    }
  }

  void loop(const Elem& q, const std::string& tag) {
    UrdfLoop l;
    l.line = q.xml()->GetLineNum();
    l.axis = Vec3::UnitZ();  // unused by spherical / fixed loops; keeps the cut frames = P, S
    if (const char* n = q.xml()->Attribute("name")) {
      l.name = n;
      if (!t_.loops.insert(l.name).second) q.fail("duplicate equality name '" + l.name + "'");
    } else {
      do l.name = tag + "#" + std::to_string(t_.unnamed++);
      while (!t_.loops.insert(l.name).second);
    }
    const bool bySite = q.has("site1") || q.has("site2");
    if (bySite) {
      if (!q.has("site1") || !q.has("site2")) q.fail("site1 and site2 must be given together");
      if (q.has("body1") || q.has("body2") || q.has("anchor") || q.has("relpose"))
        q.fail("site1/site2 cannot be combined with body1, body2, anchor or relpose");
      const Site &s1 = siteRef(q, "site1"), &s2 = siteRef(q, "site2");
      l.predecessor = s1.link;
      l.successor = s2.link;
      l.predecessorOrigin = s1.X;
      l.successorOrigin = s2.X;
      if (tag == "connect") {
        l.predecessorOrigin.R.setIdentity();
        l.successorOrigin.R.setIdentity();
      }
    } else {
      l.predecessor = bodyRef(q, "body1", true);
      l.successor = bodyRef(q, "body2", false);
      const Transform& W1 = t_.poses.at(l.predecessor);
      const Transform& W2 = t_.poses.at(l.successor);
      if (tag == "connect") {
        if (!q.has("anchor")) q.fail("missing attribute 'anchor'");
        const Vec3 a1 = q.vec3("anchor", Vec3::Zero());
        // The anchor on body2 is where body1's anchor is at qpos0 (MuJoCo).
        l.predecessorOrigin = Transform(Mat3::Identity(), a1);
        const Vec3 a2 = W2.R.transpose() * (W1.R * a1 + W1.p - W2.p);
        l.successorOrigin = Transform(W2.R.transpose() * W1.R, a2);
      } else {
        const auto rp = q.numbers("relpose", 7, {0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0});
        const Vec3 anchor = q.vec3("anchor", Vec3::Zero());  // in body2
        l.successorOrigin = Transform(Mat3::Identity(), anchor);
        if (rp[3] == 0.0 && rp[4] == 0.0 && rp[5] == 0.0 && rp[6] == 0.0) {
          // relative pose of qpos0: body1's frame at body2's anchor
          l.predecessorOrigin =
              Transform(W1.R.transpose() * W2.R, W1.R.transpose() * (W2.R * anchor + W2.p - W1.p));
        } else {
          l.predecessorOrigin =
              Transform(quatToMatrix(rp[3], rp[4], rp[5], rp[6]), Vec3(rp[0], rp[1], rp[2]));
        }
      }
    }
    const double torquescale = tag == "weld" ? q.number("torquescale", 1.0) : 0.0;
    // A weld without its rotational rows (torquescale 0) is a connect (MuJoCo docs).
    l.type = tag == "connect" || torquescale == 0.0 ? JointType::Spherical : JointType::Fixed;
    if (l.predecessor == l.successor) q.fail("body1 and body2 are the same body");
    urdf_.loops.push_back(l);
  }

  void jointCoupling(const Elem& q) {
    if (!q.has("joint1")) q.fail("missing attribute 'joint1'");
    const std::string j1 = q.str("joint1", ""), j2 = q.str("joint2", "");
    if (j2.empty())
      q.fail("a joint equality without joint2 locks joint '" + j1 +
             "' to a constant; not supported (make the body rigid instead)");
    for (const std::string& j : {j1, j2}) {
      if (!t_.jointType.count(j)) q.fail("unknown joint '" + j + "'");
      const std::string& t = t_.jointType.at(j);
      if (t != "hinge" && t != "slide")
        q.fail("joint '" + j + "' is a " + t + " joint; joint equalities take hinge or slide");
    }
    const auto c = q.numbers("polycoef", 5, {0.0, 1.0, 0.0, 0.0, 0.0}, 1);
    if (c[2] != 0.0 || c[3] != 0.0 || c[4] != 0.0)
      q.fail("attribute 'polycoef': only a linear relation (a2 = a3 = a4 = 0) is supported");
    for (auto& j : urdf_.joints) {
      if (j.name != j1) continue;
      if (j.mimic.present) q.fail("joint '" + j1 + "' is already joint1 of another equality");
      j.mimic.present = true;
      j.mimic.joint = j2;
      j.mimic.multiplier = c[1];  // q1 - q1_0 = a0 + a1 (q2 - q2_0); q = qpos - ref
      j.mimic.offset = c[0];
      j.mimic.line = q.xml()->GetLineNum();
    }
  }

 private:
  Context& ctx_;
  BodyTables& t_;
  UrdfDescription& urdf_;
};

}  // namespace

void readEqualities(const XMLElement* equality, Context& ctx, BodyTables& t,
                    UrdfDescription& urdf) {
  Equalities(ctx, t, urdf).read(equality);
}

}  // namespace clusterdyn::mjcf
