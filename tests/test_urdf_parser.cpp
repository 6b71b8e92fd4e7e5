// URDF reading and tree-model building: one test per input error (the ModelError message must
// name the file, the line, the element and the attribute concerned), the shared models, fused
// fixed links, massless rotors, origins, the floating-base option, and random URDF texts that
// must give exactly the model built programmatically from the same random description.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "test_util.hpp"

namespace clusterdyn::test {
namespace {

constexpr double kPi = 3.14159265358979323846;

/// The text of a <robot> whose body is given; line 1 is the XML declaration, line 2 <robot>.
std::string robot(const std::string& body) {
  return "<?xml version=\"1.0\"?>\n<robot name=\"test_robot\">\n" + body + "</robot>\n";
}

/// 1-based line of the first line containing marker (0 if none).
int lineOf(const std::string& text, const std::string& marker) {
  std::istringstream is(text);
  std::string line;
  for (int n = 1; std::getline(is, line); ++n)
    if (line.find(marker) != std::string::npos) return n;
  return 0;
}

/// A link with a valid inertial block (5 lines).
std::string link(const std::string& name, double mass = 1.0) {
  std::ostringstream os;
  os << "  <link name=\"" << name << "\">\n    <inertial>\n      <mass value=\"" << mass
     << "\"/>\n      <inertia ixx=\"0.01\" iyy=\"0.02\" izz=\"0.025\"/>\n    </inertial>\n"
     << "  </link>\n";
  return os.str();
}

/// A revolute joint (several lines); extra goes inside the element.
std::string joint(const std::string& name, const std::string& parent, const std::string& child,
                  const std::string& extra = "", const std::string& type = "revolute") {
  return "  <joint name=\"" + name + "\" type=\"" + type + "\">\n    <parent link=\"" + parent +
         "\"/>\n    <child link=\"" + child + "\"/>\n    <axis xyz=\"0 0 1\"/>\n" + extra +
         "  </joint>\n";
}

/// A valid two-link arm: base -> l1 (j1) -> l2 (j2).
std::string validBody() {
  return "  <link name=\"base\"/>\n" + link("l1") + link("l2") + joint("j1", "base", "l1") +
         joint("j2", "l1", "l2");
}

/// Writes text to a file named name, loads it, and returns the ModelError message ("" and a
/// test failure if it loads).
std::string loadError(const std::string& name, const std::string& text, std::string* path,
                      const ModelOptions& options = {}) {
  *path = writeTempFile(name, text);
  try {
    loadTreeModel(*path, options);
  } catch (const ModelError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-ModelError exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "loading " << name << " did not throw";
  return "";
}

/// The message starts with "path:line: " and contains every fragment.
::testing::AssertionResult namesLocation(const std::string& msg, const std::string& path, int line,
                                         std::initializer_list<std::string> fragments) {
  const std::string prefix = path + ":" + std::to_string(line) + ": ";
  if (line <= 0) return ::testing::AssertionFailure() << "bad test: marker not found";
  if (msg.compare(0, prefix.size(), prefix) != 0)
    return ::testing::AssertionFailure()
           << "message '" << msg << "' does not start with '" << prefix << "'";
  for (const std::string& f : fragments)
    if (msg.find(f) == std::string::npos)
      return ::testing::AssertionFailure() << "message '" << msg << "' lacks '" << f << "'";
  return ::testing::AssertionSuccess() << msg;
}

// ---------------------------------------------------------------------------------------------
// Errors.

TEST(UrdfErrors, UnreadableFile) {
  const std::string path = ::testing::TempDir() + "clusterdyn_no_such_dir/missing.urdf";
  try {
    loadTreeModel(path);
    FAIL() << "no exception";
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(path + ":", 0), 0u) << msg;
    EXPECT_NE(msg.find("cannot read"), std::string::npos) << msg;
  }
}

TEST(UrdfErrors, MalformedXml) {
  // An attribute value without quotes: reported on its own line.
  {
    const std::string text = robot(
        "  <link name=\"base\"/>\n"
        "  <link name=l1/> <!--X-->\n");
    std::string path;
    const std::string msg = loadError("malformed1.urdf", text, &path);
    EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"malformed XML", "link"}));
  }
  // An end tag that does not match: tinyxml2 reports the element left open (<inertial>, on
  // its opening line).
  {
    const std::string text = robot(
        "  <link name=\"base\"/>\n"
        "  <link name=\"l1\">\n"
        "    <inertial> <!--X-->\n"
        "  </link>\n");
    std::string path;
    const std::string msg = loadError("malformed2.urdf", text, &path);
    EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"malformed XML", "inertial"}));
  }
}

TEST(UrdfErrors, UnclosedRobotElement) {
  const std::string text = "<?xml version=\"1.0\"?>\n<robot name=\"r\">\n  <link name=\"a\"/>\n";
  std::string path;
  const std::string msg = loadError("unclosed.urdf", text, &path);
  EXPECT_EQ(msg.rfind(path + ":", 0), 0u) << msg;
  EXPECT_NE(msg.find("malformed XML"), std::string::npos) << msg;
}

TEST(UrdfErrors, RootElementIsNotRobot) {
  const std::string text = "<?xml version=\"1.0\"?>\n<model name=\"r\"> <!--X-->\n</model>\n";
  std::string path;
  const std::string msg = loadError("notrobot.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<model", "<robot>"}));
}

TEST(UrdfErrors, MissingParentElement) {
  const std::string text = robot("  <link name=\"base\"/>\n" + link("l1") +
                                 "  <joint name=\"j1\" type=\"revolute\"> <!--X-->\n"
                                 "    <child link=\"l1\"/>\n  </joint>\n");
  std::string path;
  const std::string msg = loadError("noparent.urdf", text, &path);
  EXPECT_TRUE(
      namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<joint name=\"j1\">", "<parent>"}));
}

TEST(UrdfErrors, MissingParentLinkAttribute) {
  const std::string text = robot("  <link name=\"base\"/>\n" + link("l1") +
                                 "  <joint name=\"j1\" type=\"revolute\">\n"
                                 "    <parent/> <!--X-->\n    <child link=\"l1\"/>\n  </joint>\n");
  std::string path;
  const std::string msg = loadError("noparentlink.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<parent>", "'link'"}));
}

TEST(UrdfErrors, MissingChildElement) {
  const std::string text = robot("  <link name=\"base\"/>\n" + link("l1") +
                                 "  <joint name=\"j1\" type=\"revolute\"> <!--X-->\n"
                                 "    <parent link=\"base\"/>\n  </joint>\n");
  std::string path;
  const std::string msg = loadError("nochild.urdf", text, &path);
  EXPECT_TRUE(
      namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<joint name=\"j1\">", "<child>"}));
}

TEST(UrdfErrors, EmptyChildLinkAttribute) {
  const std::string text = robot("  <link name=\"base\"/>\n" + link("l1") +
                                 "  <joint name=\"j1\" type=\"revolute\">\n"
                                 "    <parent link=\"base\"/>\n    <child link=\"\"/> <!--X-->\n"
                                 "  </joint>\n");
  std::string path;
  const std::string msg = loadError("emptychild.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<child>", "'link'", "empty"}));
}

TEST(UrdfErrors, UnknownParentLink) {
  const std::string text = robot("  <link name=\"base\"/>\n" + link("l1") +
                                 "  <joint name=\"j1\" type=\"revolute\">\n"
                                 "    <parent link=\"nowhere\"/> <!--X-->\n"
                                 "    <child link=\"l1\"/>\n  </joint>\n");
  std::string path;
  const std::string msg = loadError("unknownparent.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"),
                            {"<parent>", "'link'", "'nowhere'", "'j1'"}));
}

TEST(UrdfErrors, UnknownChildLink) {
  const std::string text =
      robot("  <link name=\"base\"/>\n" + link("l1") + joint("j1", "base", "l1") +
            "  <joint name=\"j2\" type=\"revolute\">\n"
            "    <parent link=\"l1\"/>\n"
            "    <child link=\"l9\"/> <!--X-->\n  </joint>\n");
  std::string path;
  const std::string msg = loadError("unknownchild.urdf", text, &path);
  EXPECT_TRUE(
      namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<child>", "'link'", "'l9'", "'j2'"}));
}

TEST(UrdfErrors, ParentEqualsChild) {
  const std::string text =
      robot("  <link name=\"base\"/>\n" + link("l1") +
            "  <joint name=\"j1\" type=\"revolute\"> <!--X-->\n    <parent link=\"l1\"/>\n"
            "    <child link=\"l1\"/>\n  </joint>\n");
  std::string path;
  const std::string msg = loadError("selfjoint.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<joint name=\"j1\">", "l1"}));
}

TEST(UrdfErrors, DuplicateLinkName) {
  const std::string text = robot("  <link name=\"base\"/>\n" + link("l1") +
                                 "  <link name=\"l1\"/> <!--X-->\n" + joint("j1", "base", "l1"));
  std::string path;
  const std::string msg = loadError("duplink.urdf", text, &path);
  EXPECT_TRUE(
      namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<link name=\"l1\">", "duplicate"}));
}

TEST(UrdfErrors, DuplicateJointName) {
  const std::string text =
      robot("  <link name=\"base\"/>\n" + link("l1") + link("l2") + joint("j1", "base", "l1") +
            "  <joint name=\"j1\" type=\"revolute\"> <!--X-->\n    <parent link=\"l1\"/>\n"
            "    <child link=\"l2\"/>\n  </joint>\n");
  std::string path;
  const std::string msg = loadError("dupjoint.urdf", text, &path);
  EXPECT_TRUE(
      namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<joint name=\"j1\">", "duplicate"}));
}

TEST(UrdfErrors, LinkWithTwoParentJoints) {
  const std::string text =
      robot("  <link name=\"base\"/>\n" + link("l1") + link("l2") + joint("j1", "base", "l1") +
            joint("j2", "base", "l2") +
            "  <joint name=\"j3\" type=\"revolute\"> <!--X-->\n    <parent link=\"l1\"/>\n"
            "    <child link=\"l2\"/>\n  </joint>\n");
  std::string path;
  const std::string msg = loadError("twoparents.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"),
                            {"<joint name=\"j3\">", "'l2'", "parent joint"}));
}

TEST(UrdfErrors, CycleDetachedFromTheRoot) {
  // base is the root; a -> b -> a is a cycle that the root never reaches.
  const std::string text = robot("  <link name=\"base\"/>\n  <link name=\"a\"/> <!--X-->\n" +
                                 link("b") + joint("ja", "a", "b") + joint("jb", "b", "a"));
  std::string path;
  const std::string msg = loadError("cycle1.urdf", text, &path);
  EXPECT_TRUE(
      namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<link name=\"a\">", "cycle", "'base'"}));
}

TEST(UrdfErrors, CycleThroughEveryLink) {
  // Every link has a parent joint, so there is no root: the message must still point at a joint
  // of the cycle (file:line: <joint ...>).
  const std::string text = robot(link("a") + link("b") + link("c") + joint("jab", "a", "b") +
                                 joint("jbc", "b", "c") + joint("jca", "c", "a"));
  std::string path;
  const std::string msg = loadError("cycle2.urdf", text, &path);
  EXPECT_NE(msg.find("cycle"), std::string::npos) << msg;
  const std::regex located(
      "^" + std::regex_replace(path, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
      R"re(:(\d+): <joint name="(jab|jbc|jca)">)re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(msg, m, located))
      << "message does not name the file, line and joint: '" << msg << "'";
  EXPECT_EQ(std::stoi(m[1]), lineOf(text, "<joint name=\"" + m[2].str() + "\""));
}

TEST(UrdfErrors, SeveralRootLinks) {
  const std::string text =
      robot("  <link name=\"base\"/>\n" + link("l1") + "  <link name=\"orphan\"/> <!--X-->\n" +
            joint("j1", "base", "l1"));
  std::string path;
  const std::string msg = loadError("roots.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"),
                            {"<link name=\"orphan\">", "root", "'base'", "'orphan'"}));
}

TEST(UrdfErrors, NoLink) {
  const std::string text = "<?xml version=\"1.0\"?>\n<robot name=\"r\"> <!--X-->\n</robot>\n";
  std::string path;
  const std::string msg = loadError("nolink.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<robot", "<link>"}));
}

TEST(UrdfErrors, ZeroAxis) {
  for (const char* type : {"revolute", "continuous", "prismatic", "planar"}) {
    SCOPED_TRACE(type);
    const std::string text =
        robot("  <link name=\"base\"/>\n" + link("l1") + "  <joint name=\"j1\" type=\"" + type +
              "\">\n    <parent link=\"base\"/>\n    <child link=\"l1\"/>\n"
              "    <axis xyz=\"0 0 0\"/> <!--X-->\n  </joint>\n");
    std::string path;
    const std::string msg = loadError("zeroaxis.urdf", text, &path);
    EXPECT_TRUE(
        namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<axis>", "'xyz'", "'j1'", "zero"}));
  }
}

TEST(UrdfErrors, NegativeMass) {
  const std::string text = robot(
      "  <link name=\"base\"/>\n  <link name=\"l1\">\n    <inertial>\n"
      "      <mass value=\"-0.5\"/> <!--X-->\n"
      "      <inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\"/>\n    </inertial>\n"
      "  </link>\n" +
      joint("j1", "base", "l1"));
  std::string path;
  const std::string msg = loadError("negmass.urdf", text, &path);
  EXPECT_TRUE(
      namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<mass>", "'value'", "'l1'", "mass"}));
}

TEST(UrdfErrors, InertiaNotPositiveSemiDefinite) {
  const std::string text = robot(
      "  <link name=\"base\"/>\n  <link name=\"l1\">\n    <inertial>\n"
      "      <mass value=\"1\"/>\n"
      "      <inertia ixx=\"0.01\" ixy=\"0.5\" iyy=\"0.01\" izz=\"0.01\"/> <!--X-->\n"
      "    </inertial>\n  </link>\n" +
      joint("j1", "base", "l1"));
  std::string path;
  const std::string msg = loadError("nonpsd.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"),
                            {"<inertia>", "'l1'", "positive semi-definite"}));
}

TEST(UrdfErrors, NegativeDiagonalInertia) {
  const std::string text = robot(
      "  <link name=\"base\"/>\n  <link name=\"l1\">\n    <inertial>\n"
      "      <mass value=\"1\"/>\n"
      "      <inertia ixx=\"-0.01\" iyy=\"0.01\" izz=\"0.01\"/> <!--X-->\n"
      "    </inertial>\n  </link>\n" +
      joint("j1", "base", "l1"));
  std::string path;
  const std::string msg = loadError("negdiag.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<inertia>", "'l1'"}));
}

TEST(UrdfErrors, NonFiniteNumbers) {
  struct Case {
    std::string name, line, element, attribute;
  };
  const std::vector<Case> cases = {
      {"mass_nan", "      <mass value=\"nan\"/> <!--X-->\n", "<mass>", "'value'"},
      {"mass_inf", "      <mass value=\"inf\"/> <!--X-->\n", "<mass>", "'value'"},
      {"mass_overflow", "      <mass value=\"1e999\"/> <!--X-->\n", "<mass>", "'value'"},
      {"mass_text", "      <mass value=\"heavy\"/> <!--X-->\n", "<mass>", "'value'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string text =
        robot("  <link name=\"base\"/>\n  <link name=\"l1\">\n    <inertial>\n" + c.line +
              "      <inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\"/>\n    </inertial>\n"
              "  </link>\n" +
              joint("j1", "base", "l1"));
    std::string path;
    const std::string msg = loadError(c.name + ".urdf", text, &path);
    EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {c.element, c.attribute}));
  }
  // In an inertia component, a joint origin, an axis and a limit.
  const std::vector<Case> jointCases = {
      {"origin_inf", "    <origin xyz=\"0 inf 0\"/> <!--X-->\n", "<origin>", "'xyz'"},
      {"origin_nan_rpy", "    <origin rpy=\"0 0 NaN\"/> <!--X-->\n", "<origin>", "'rpy'"},
      {"axis_nan", "    <axis xyz=\"nan 0 1\"/> <!--X-->\n", "<axis>", "'xyz'"},
      {"limit_inf", "    <limit lower=\"-inf\" upper=\"1\"/> <!--X-->\n", "<limit>", "'lower'"},
      {"limit_text", "    <limit lower=\"-1\" upper=\"one\"/> <!--X-->\n", "<limit>", "'upper'"},
  };
  for (const Case& c : jointCases) {
    SCOPED_TRACE(c.name);
    const std::string text =
        robot("  <link name=\"base\"/>\n" + link("l1") +
              "  <joint name=\"j1\" type=\"revolute\">\n    <parent link=\"base\"/>\n"
              "    <child link=\"l1\"/>\n" +
              c.line + "  </joint>\n");
    std::string path;
    const std::string msg = loadError(c.name + ".urdf", text, &path);
    EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {c.element, c.attribute}));
  }
  const std::string text = robot(
      "  <link name=\"base\"/>\n  <link name=\"l1\">\n    <inertial>\n"
      "      <mass value=\"1\"/>\n"
      "      <inertia ixx=\"0.01\" iyy=\"inf\" izz=\"0.01\"/> <!--X-->\n"
      "    </inertial>\n  </link>\n" +
      joint("j1", "base", "l1"));
  std::string path;
  const std::string msg = loadError("inertia_inf.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<inertia>", "'iyy'"}));
}

TEST(UrdfErrors, WrongNumberOfComponents) {
  for (const std::string& xyz :
       std::initializer_list<std::string>{"0 0", "0 0 0 1", "", "1,2,3", "0 0 x"}) {
    SCOPED_TRACE("xyz='" + xyz + "'");
    const std::string text =
        robot("  <link name=\"base\"/>\n" + link("l1") +
              "  <joint name=\"j1\" type=\"revolute\">\n    <parent link=\"base\"/>\n"
              "    <child link=\"l1\"/>\n    <origin xyz=\"" +
              xyz + "\" rpy=\"0 0 0\"/> <!--X-->\n  </joint>\n");
    std::string path;
    const std::string msg = loadError("ncomp.urdf", text, &path);
    EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<origin>", "'xyz'", "3"}));
  }
  // In an inertial origin's rpy.
  const std::string text = robot(
      "  <link name=\"base\"/>\n  <link name=\"l1\">\n    <inertial>\n"
      "      <origin xyz=\"0 0 0\" rpy=\"0 0\"/> <!--X-->\n      <mass value=\"1\"/>\n"
      "      <inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\"/>\n    </inertial>\n"
      "  </link>\n" +
      joint("j1", "base", "l1"));
  std::string path;
  const std::string msg = loadError("ncomp_rpy.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<origin>", "'rpy'"}));
}

TEST(UrdfErrors, UnknownJointType) {
  const std::string text = robot("  <link name=\"base\"/>\n" + link("l1") +
                                 "  <joint name=\"j1\" type=\"hinge\"> <!--X-->\n"
                                 "    <parent link=\"base\"/>\n    <child link=\"l1\"/>\n"
                                 "  </joint>\n");
  std::string path;
  const std::string msg = loadError("jtype.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"),
                            {"<joint name=\"j1\">", "'type'", "'hinge'"}));
}

TEST(UrdfErrors, MissingJointType) {
  const std::string text = robot("  <link name=\"base\"/>\n" + link("l1") +
                                 "  <joint name=\"j1\"> <!--X-->\n"
                                 "    <parent link=\"base\"/>\n    <child link=\"l1\"/>\n"
                                 "  </joint>\n");
  std::string path;
  const std::string msg = loadError("notype.urdf", text, &path);
  EXPECT_TRUE(
      namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<joint name=\"j1\">", "'type'"}));
}

TEST(UrdfErrors, BadIndependentAttribute) {
  const std::string text = robot("  <link name=\"base\"/>\n" + link("l1") +
                                 "  <joint name=\"j1\" type=\"revolute\" independent=\"maybe\">"
                                 " <!--X-->\n    <parent link=\"base\"/>\n"
                                 "    <child link=\"l1\"/>\n  </joint>\n");
  std::string path;
  const std::string msg = loadError("indep.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"),
                            {"<joint name=\"j1\">", "'independent'", "'maybe'"}));
}

TEST(UrdfErrors, LowerLimitAboveUpper) {
  const std::string text =
      robot("  <link name=\"base\"/>\n" + link("l1") +
            joint("j1", "base", "l1", "    <limit lower=\"1\" upper=\"-1\"/> <!--X-->\n"));
  std::string path;
  const std::string msg = loadError("limits.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"),
                            {"<limit>", "'lower'", "'upper'", "'j1'"}));
}

TEST(UrdfErrors, MissingMassElement) {
  const std::string text = robot(
      "  <link name=\"base\"/>\n  <link name=\"l1\">\n    <inertial> <!--X-->\n"
      "      <inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\"/>\n    </inertial>\n  </link>\n" +
      joint("j1", "base", "l1"));
  std::string path;
  const std::string msg = loadError("nomass.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<inertial>", "<mass>", "'l1'"}));
}

TEST(UrdfErrors, MissingLinkName) {
  const std::string text = robot("  <link name=\"base\"/>\n  <link/> <!--X-->\n");
  std::string path;
  const std::string msg = loadError("noname.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<link>", "'name'"}));
}

TEST(UrdfErrors, CouplingWithUnknownLink) {
  for (const char* which : {"predecessor", "successor"}) {
    SCOPED_TRACE(which);
    const bool pred = std::string(which) == "predecessor";
    const std::string text =
        robot(validBody() + "  <coupling name=\"gear\"> <!--X-->\n    <predecessor link=\"" +
              (pred ? "ghost" : "l1") + "\"/>\n    <successor link=\"" + (pred ? "l2" : "ghost") +
              "\"/>\n    <ratio value=\"6\"/>\n  </coupling>\n");
    std::string path;
    const std::string msg = loadError("coupling.urdf", text, &path);
    EXPECT_TRUE(namesLocation(
        msg, path, lineOf(text, "<!--X-->"),
        {"<coupling name=\"gear\">", std::string("<") + which + ">", "'link'", "'ghost'"}));
  }
}

TEST(UrdfErrors, LoopWithUnknownLink) {
  for (const char* which : {"predecessor", "successor"}) {
    SCOPED_TRACE(which);
    const bool pred = std::string(which) == "predecessor";
    const std::string text =
        robot(validBody() +
              "  <loop name=\"rod\" type=\"revolute\"> <!--X-->\n"
              "    <predecessor link=\"" +
              (pred ? "ghost" : "l1") + "\">\n      <origin xyz=\"1 0 0\"/>\n    </predecessor>\n" +
              "    <successor link=\"" + (pred ? "l2" : "ghost") +
              "\"/>\n    <axis xyz=\"0 0 1\"/>\n  </loop>\n");
    std::string path;
    const std::string msg = loadError("loop.urdf", text, &path);
    EXPECT_TRUE(namesLocation(
        msg, path, lineOf(text, "<!--X-->"),
        {"<loop name=\"rod\">", std::string("<") + which + ">", "'link'", "'ghost'"}));
  }
}

TEST(UrdfErrors, LoopWithoutAxis) {
  const std::string text = robot(validBody() +
                                 "  <loop name=\"rod\" type=\"revolute\"> <!--X-->\n"
                                 "    <predecessor link=\"l1\"/>\n    <successor link=\"l2\"/>\n"
                                 "  </loop>\n");
  std::string path;
  const std::string msg = loadError("loopaxis.urdf", text, &path);
  EXPECT_TRUE(
      namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<loop name=\"rod\">", "<axis>"}));
}

TEST(UrdfErrors, MimicOfUnknownJoint) {
  const std::string text =
      robot("  <link name=\"base\"/>\n" + link("l1") +
            joint("j1", "base", "l1", "    <mimic joint=\"jx\" multiplier=\"2\"/> <!--X-->\n"));
  std::string path;
  const std::string msg = loadError("mimic.urdf", text, &path);
  EXPECT_TRUE(namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<mimic>", "'joint'", "'jx'"}));
}

TEST(UrdfErrors, FloatingJointBelowTheRoot) {
  const std::string text =
      robot("  <link name=\"base\"/>\n" + link("l1") + link("l2") + joint("j1", "base", "l1") +
            "  <joint name=\"free\" type=\"floating\"> <!--X-->\n"
            "    <parent link=\"l1\"/>\n    <child link=\"l2\"/>\n"
            "  </joint>\n");
  std::string path;
  const std::string msg = loadError("floatingdeep.urdf", text, &path);
  EXPECT_TRUE(
      namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<joint name=\"free\">", "floating"}));
}

TEST(UrdfErrors, FloatingBaseOptionWithFloatingJoint) {
  const std::string text = robot("  <link name=\"world\"/>\n" + link("body") +
                                 "  <joint name=\"free\" type=\"floating\"> <!--X-->\n"
                                 "    <parent link=\"world\"/>\n    <child link=\"body\"/>\n"
                                 "  </joint>\n");
  std::string path;
  ModelOptions o;
  o.floatingBase = true;
  const std::string msg = loadError("floatingtwice.urdf", text, &path, o);
  EXPECT_TRUE(
      namesLocation(msg, path, lineOf(text, "<!--X-->"), {"<joint name=\"free\">", "floating"}));
  // Without the option the same file loads.
  EXPECT_EQ(loadTreeModel(path).nv, 6);
}

TEST(UrdfErrors, StringSourceNameIsUsed) {
  const std::string text = robot("  <link name=\"base\"/>\n  <link name=\"base\"/> <!--X-->\n");
  try {
    parseUrdfString(text, "inline-robot");
    FAIL() << "no exception";
  } catch (const ModelError& e) {
    EXPECT_TRUE(namesLocation(e.what(), "inline-robot", lineOf(text, "<!--X-->"),
                              {"<link name=\"base\">", "duplicate"}));
  }
}

// ---------------------------------------------------------------------------------------------
// Valid input.

/// Occurrences of regex group 1 in text.
std::vector<std::string> matches(const std::string& text, const std::string& re) {
  std::vector<std::string> out;
  const std::regex r(re);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), r); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1].str());
  return out;
}

TEST(UrdfModels, SharedTreeModelsLoad) {
  CLUSTERDYN_SKIP_WITHOUT_SHARED(sharedPath("urdfplus"));
  struct Expected {
    std::string file;
    int nbodies, nq, nv;
    bool floating;
    std::string root;
  };
  // Counts read from the files: a floating joint plus 12 (cheetah) or 18 (humanoids) revolute
  // joints; the double pendulum has two revolute joints on a fixed base.
  const std::vector<Expected> expected = {
      {"double_pendulum.urdf", 2, 2, 2, false, "base_link"},
      {"mini_cheetah_approximate.urdf", 13, 19, 18, true, "base"},
      {"mit_humanoid_approximate.urdf", 19, 25, 24, true, "base"},
      {"tello_humanoid_approximate.urdf", 19, 25, 24, true, "ground"},
  };
  std::set<std::string> seen;
  for (const std::string& path : sharedTreeModelFiles())
    seen.insert(path.substr(path.find_last_of('/') + 1));
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.file);
    EXPECT_TRUE(seen.count(e.file)) << "sharedTreeModelFiles() misses " << e.file;
    const std::string path = sharedPath("urdfplus/" + e.file);
    const Model m = loadTreeModel(path);
    EXPECT_EQ(m.nbodies, e.nbodies);
    EXPECT_EQ(m.nq, e.nq);
    EXPECT_EQ(m.nv, e.nv);
    EXPECT_EQ(m.joints[0].type == JointType::Floating, e.floating);
    if (!e.root.empty()) {
      EXPECT_EQ(m.rootLink, e.root);
    }
    // Cross-check against the file text.
    const std::string text = readTextFile(path);
    const auto linkNames = matches(text, R"re(<link\s+name="([^"]*)")re");
    const auto masses = matches(text, R"re(<mass\s+value="([^"]*)")re");
    const auto jointTypes = matches(text, R"re(<joint[^>]*type="([a-z]*)")re");
    EXPECT_EQ(m.frames.size(), linkNames.size());
    int moving = 0;
    for (const auto& t : jointTypes) moving += t != "fixed";
    EXPECT_EQ(m.nbodies, moving);
    double mass = 0;
    for (const auto& s : masses) mass += std::stod(s);
    EXPECT_NEAR(m.totalMass(), mass, 1e-12 * mass);
    for (const std::string& name : linkNames) EXPECT_GE(m.frameId(name), 0) << name;
    for (int i = 0; i < m.nbodies; ++i) {
      EXPECT_GT(m.inertias[i].mass, 0.0) << m.bodyNames[i];
      EXPECT_EQ(m.frames[m.frameId(m.bodyNames[i])].body, i);
    }
    // Every body's parent precedes it (regular numbering) and the coordinate blocks tile q, v.
    for (int i = 0; i < m.nbodies; ++i) EXPECT_LT(m.parent[i], i);
    EXPECT_EQ(m.positionNames.size(), static_cast<size_t>(m.nq));
    EXPECT_EQ(m.velocityNames.size(), static_cast<size_t>(m.nv));
    // The parser records the line of every joint.
    const UrdfDescription d = parseUrdfFile(path);
    EXPECT_EQ(d.links.size(), linkNames.size());
    EXPECT_EQ(d.joints.size(), jointTypes.size());
    for (const UrdfJoint& j : d.joints)
      EXPECT_EQ(j.line, lineOf(text, "name=\"" + j.name + "\"")) << j.name;
    for (const UrdfLink& l : d.links)
      EXPECT_EQ(l.line, lineOf(text, "<link name=\"" + l.name + "\"")) << l.name;
  }
}

TEST(UrdfModels, UrdfPlusFilesParseCouplingsAndLoops) {
  CLUSTERDYN_SKIP_WITHOUT_SHARED(sharedPath("urdfplus/mini_cheetah.urdf"));
  CLUSTERDYN_SKIP_WITHOUT_SHARED(sharedPath("urdfplus/four_bar.urdf"));
  const UrdfDescription cheetah = parseUrdfFile(sharedPath("urdfplus/mini_cheetah.urdf"));
  EXPECT_EQ(cheetah.couplings.size(), 12u);
  ASSERT_FALSE(cheetah.couplings.empty());
  EXPECT_EQ(cheetah.couplings[0].name, "FR_abad_tranmission");
  ASSERT_EQ(cheetah.couplings[0].predecessors.size(), 1u);
  EXPECT_EQ(cheetah.couplings[0].predecessors[0].link, "FR_abad_link");
  EXPECT_DOUBLE_EQ(cheetah.couplings[0].predecessors[0].ratio, 6.0);
  EXPECT_EQ(cheetah.couplings[0].successor, "FR_abad_rotor");
  const UrdfDescription fourBar = parseUrdfFile(sharedPath("urdfplus/four_bar.urdf"));
  ASSERT_EQ(fourBar.loops.size(), 1u);
  EXPECT_EQ(fourBar.loops[0].type, JointType::Revolute);
  EXPECT_EQ(fourBar.loops[0].predecessor, "link2");
  EXPECT_EQ(fourBar.loops[0].successor, "link3");
  EXPECT_TRUE(fourBar.loops[0].predecessorOrigin.p.isApprox(Vec3(1, 0, 0)));
  EXPECT_TRUE(fourBar.loops[0].successorOrigin.p.isApprox(Vec3(0.5, 0, 0)));
  EXPECT_TRUE(fourBar.loops[0].axis.isApprox(Vec3::UnitZ()));
  // The spanning tree ignores the chords but still loads.
  const Model tree = loadTreeModel(sharedPath("urdfplus/mini_cheetah.urdf"));
  EXPECT_EQ(tree.nv, 30);  // 6 + 12 joints + 12 rotors
}

TEST(UrdfModels, RandomUrdfGivesTheProgrammaticModel) {
  std::mt19937_64 rng(99);
  int fused = 0;
  for (int trial = 0; trial < 40; ++trial) {
    RandomModelOptions o;
    o.nbodies = 1 + trial % 9;
    o.floatingBase = trial % 3 == 0;
    o.branchProbability = (trial % 4) * 0.25;
    o.fixedLinkProbability = trial % 2 ? 0.3 : 0.0;
    Model expected;
    const std::string urdf = randomUrdfString(rng, o, &expected);
    SCOPED_TRACE("trial " + std::to_string(trial) + "\n" + urdf);
    Model loaded;
    ASSERT_NO_THROW(loaded = buildTreeModel(parseUrdfString(urdf)));
    EXPECT_TRUE(modelsEquivalent(loaded, expected, 1e-12));
    for (const Frame& f : loaded.frames) fused += !f.isBody;
    // And the two give the same dynamics.
    Data d1(loaded), d2(expected);
    const RandomState st = randomState(expected, rng);
    ASSERT_EQ(aba(loaded, d1, st.q, st.v, st.tau), Status::Ok);
    ASSERT_EQ(aba(expected, d2, st.q, st.v, st.tau), Status::Ok);
    EXPECT_TRUE(isClose(d1.ddq, d2.ddq, 1e-10));
  }
  EXPECT_GT(fused, 10);
}

/// Rotations about the coordinate axes, written out.
Mat3 rotX(double a) {
  Mat3 R;
  R << 1, 0, 0, 0, std::cos(a), -std::sin(a), 0, std::sin(a), std::cos(a);
  return R;
}
Mat3 rotY(double a) {
  Mat3 R;
  R << std::cos(a), 0, std::sin(a), 0, 1, 0, -std::sin(a), 0, std::cos(a);
  return R;
}
Mat3 rotZ(double a) {
  Mat3 R;
  R << std::cos(a), -std::sin(a), 0, std::sin(a), std::cos(a), 0, 0, 0, 1;
  return R;
}

TEST(UrdfModels, OriginRpyAndXyzAreApplied) {
  const std::string text =
      robot("  <link name=\"base\"/>\n" + link("l1") + link("l2") +
            joint("j1", "base", "l1", "    <origin xyz=\"0.1 -0.2 0.3\" rpy=\"0.4 -0.5 0.6\"/>\n") +
            "  <joint name=\"j2\" type=\"prismatic\">\n    <parent link=\"l1\"/>\n"
            "    <child link=\"l2\"/>\n    <origin xyz=\"1 2 3\"/>\n"
            "    <axis xyz=\"0 2 0\"/>\n  </joint>\n");
  const Model m = buildTreeModel(parseUrdfString(text));
  ASSERT_EQ(m.nbodies, 2);
  // URDF: rpy are fixed-axis rotations X (roll), then Y (pitch), then Z (yaw).
  const Mat3 R1 = rotZ(0.6) * rotY(-0.5) * rotX(0.4);
  EXPECT_TRUE(isClose(m.jointPlacement[0].R, R1, 1e-15));
  EXPECT_TRUE(isClose(m.jointPlacement[0].p, Vec3(0.1, -0.2, 0.3), 0.0));
  EXPECT_TRUE(isClose(m.jointPlacement[1].R, Mat3::Identity(), 0.0));
  EXPECT_TRUE(isClose(m.jointPlacement[1].p, Vec3(1, 2, 3), 0.0));
  EXPECT_TRUE(isClose(m.joints[1].axis, Vec3::UnitY(), 0.0));  // normalized
  // Placements at q = (0.7, 0.25): joint 1 rotates about z, joint 2 slides along y.
  Data data(m);
  const VecX q = (VecX(2) << 0.7, 0.25).finished();
  ASSERT_EQ(forwardKinematics(m, data, q), Status::Ok);
  const Mat3 oR1 = R1 * rotZ(0.7);
  const Vec3 op2 = Vec3(0.1, -0.2, 0.3) + oR1 * Vec3(1, 2 + 0.25, 3);
  const Transform X1 = framePlacement(m, data, m.frameId("l1"));
  const Transform X2 = framePlacement(m, data, m.frameId("l2"));
  EXPECT_TRUE(isClose(X1.R, oR1, 1e-14));
  EXPECT_TRUE(isClose(X1.p, Vec3(0.1, -0.2, 0.3), 1e-15));
  EXPECT_TRUE(isClose(X2.R, oR1, 1e-14));
  EXPECT_TRUE(isClose(X2.p, op2, 1e-14));
  // Spot values of the rpy matrix (computed independently): R1(2,0) = -sin(pitch).
  EXPECT_NEAR(R1(2, 0), std::sin(0.5), 1e-15);
  EXPECT_NEAR(m.jointPlacement[0].R(2, 0), std::sin(0.5), 1e-15);
}

TEST(UrdfModels, InertialOriginIsApplied) {
  // Inertia diag(1, 2, 3) about the COM in a frame rotated 90 deg about z, COM at (0.1, 0.2, 0.3).
  const std::string text = robot(
      "  <link name=\"base\"/>\n  <link name=\"l1\">\n    <inertial>\n"
      "      <origin xyz=\"0.1 0.2 0.3\" rpy=\"0 0 1.5707963267948966\"/>\n"
      "      <mass value=\"2\"/>\n"
      "      <inertia ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"2\" iyz=\"0\" izz=\"3\"/>\n"
      "    </inertial>\n  </link>\n" +
      joint("j1", "base", "l1"));
  const Model m = buildTreeModel(parseUrdfString(text));
  const SpatialInertia& I = m.inertias[0];
  const Vec3 c(0.1, 0.2, 0.3);
  EXPECT_DOUBLE_EQ(I.mass, 2.0);
  EXPECT_TRUE(isClose(I.h, 2.0 * c, 1e-15));
  // About the COM in link axes: the x and y moments swap.
  const Mat3 Ic = Vec3(2, 1, 3).asDiagonal();
  EXPECT_TRUE(isClose(I.inertiaAboutCom(), Ic, 1e-14));
  // About the link origin: Ic + m (|c|^2 1 - c c^T).
  const Mat3 Io = Ic + 2.0 * (c.squaredNorm() * Mat3::Identity() - c * c.transpose());
  EXPECT_TRUE(isClose(I.Io, Io, 1e-14));
}

TEST(UrdfModels, FixedJointsAreFused) {
  // l1 (revolute) carries tool (fixed, offset + rotation) which carries tip (fixed);
  // a sensor is fixed to the world root; l2 hangs below the fused tip.
  const std::string text = robot(
      "  <link name=\"base\"/>\n" + link("l1", 1.0) + link("tool", 0.5) +
      "  <link name=\"tip\">\n    <inertial>\n      <origin xyz=\"0 0 0.05\"/>\n"
      "      <mass value=\"0.25\"/>\n      <inertia ixx=\"0.001\" iyy=\"0.002\" izz=\"0.003\"/>\n"
      "    </inertial>\n  </link>\n" +
      link("sensor", 3.0) + link("l2", 2.0) + joint("j1", "base", "l1") +
      "  <joint name=\"mount\" type=\"fixed\">\n    <parent link=\"l1\"/>\n"
      "    <child link=\"tool\"/>\n    <origin xyz=\"0.2 0 0\" rpy=\"0 0 1.5707963267948966\"/>\n"
      "  </joint>\n"
      "  <joint name=\"tip_joint\" type=\"fixed\">\n    <parent link=\"tool\"/>\n"
      "    <child link=\"tip\"/>\n    <origin xyz=\"0.1 0 0\"/>\n  </joint>\n"
      "  <joint name=\"sensor_joint\" type=\"fixed\">\n    <parent link=\"base\"/>\n"
      "    <child link=\"sensor\"/>\n    <origin xyz=\"0 0 1\"/>\n  </joint>\n" +
      joint("j2", "tip", "l2", "    <origin xyz=\"0 0 0.3\"/>\n"));
  const Model m = buildTreeModel(parseUrdfString(text));
  ASSERT_EQ(m.nbodies, 2);
  EXPECT_EQ(m.bodyNames[0], "l1");
  EXPECT_EQ(m.bodyNames[1], "l2");
  EXPECT_EQ(m.parent[1], 0);
  EXPECT_EQ(m.frames.size(), 6u);
  // Frames: tool at (0.2, 0, 0) rotated 90 deg about z; tip 0.1 further along tool's x = +y.
  const Mat3 Rz = rotZ(kPi / 2);
  const Frame& tool = m.frames[m.frameId("tool")];
  const Frame& tip = m.frames[m.frameId("tip")];
  const Frame& sensor = m.frames[m.frameId("sensor")];
  EXPECT_EQ(tool.body, 0);
  EXPECT_FALSE(tool.isBody);
  EXPECT_TRUE(isClose(tool.placement.R, Rz, 1e-15));
  EXPECT_TRUE(isClose(tool.placement.p, Vec3(0.2, 0, 0), 1e-15));
  EXPECT_EQ(tip.body, 0);
  EXPECT_TRUE(isClose(tip.placement.R, Rz, 1e-15));
  EXPECT_TRUE(isClose(tip.placement.p, Vec3(0.2, 0.1, 0), 1e-15));
  EXPECT_EQ(sensor.body, -1);
  EXPECT_TRUE(isClose(sensor.placement.p, Vec3(0, 0, 1), 1e-15));
  EXPECT_TRUE(m.frames[m.frameId("l1")].isBody);
  // l2's joint sits on the tip: placement = tip placement * (0, 0, 0.3).
  EXPECT_TRUE(isClose(m.jointPlacement[1].p, Vec3(0.2, 0.1, 0.3), 1e-15));
  EXPECT_TRUE(isClose(m.jointPlacement[1].R, Rz, 1e-15));
  // Body 0 = l1 + tool + tip (sensor is on the world and has no effect).
  const SpatialInertia& I = m.inertias[0];
  EXPECT_DOUBLE_EQ(I.mass, 1.0 + 0.5 + 0.25);
  EXPECT_DOUBLE_EQ(m.totalMass(), 1.75 + 2.0);
  const Vec3 cTool(0.2, 0, 0), cTip(0.2, 0.1, 0.05);
  EXPECT_TRUE(isClose(I.h, Vec3(0.5 * cTool + 0.25 * cTip), 1e-15));
  auto about = [](double mass, const Vec3& c, const Mat3& Ic) {
    return Mat3(Ic + mass * (c.squaredNorm() * Mat3::Identity() - c * c.transpose()));
  };
  const Mat3 Il1 = Vec3(0.01, 0.02, 0.025).asDiagonal();
  const Mat3 Itool = Rz * Vec3(0.01, 0.02, 0.025).asDiagonal() * Rz.transpose();
  const Mat3 Itip = Rz * Vec3(0.001, 0.002, 0.003).asDiagonal() * Rz.transpose();
  const Mat3 expectedIo = Il1 + about(0.5, cTool, Itool) + about(0.25, cTip, Itip);
  EXPECT_TRUE(isClose(I.Io, expectedIo, 1e-14));
  // The fused frame moves with its body.
  Data data(m);
  const VecX q = (VecX(2) << 0.3, -0.4).finished();
  ASSERT_EQ(forwardKinematics(m, data, q), Status::Ok);
  const Transform Xtip = framePlacement(m, data, m.frameId("tip"));
  EXPECT_TRUE(isClose(Xtip.p, Vec3(rotZ(0.3) * Vec3(0.2, 0.1, 0)), 1e-15));
  EXPECT_TRUE(isClose(framePlacement(m, data, m.frameId("sensor")).p, Vec3(0, 0, 1), 0.0));
}

TEST(UrdfModels, MasslessRotorLinksAreAccepted) {
  const std::string text =
      robot("  <link name=\"base\"/>\n" + link("l1") +
            "  <link name=\"rotor\">\n    <inertial>\n      <mass value=\"0\"/>\n"
            "      <inertia ixx=\"0.0001\" iyy=\"0.0001\" izz=\"0.0003\"/>\n    </inertial>\n"
            "  </link>\n" +
            joint("j1", "base", "l1") + joint("jr", "l1", "rotor", "", "continuous"));
  const Model m = buildTreeModel(parseUrdfString(text));
  ASSERT_EQ(m.nbodies, 2);
  EXPECT_EQ(m.inertias[1].mass, 0.0);
  EXPECT_TRUE(isClose(m.inertias[1].Io, Mat3(Vec3(0.0001, 0.0001, 0.0003).asDiagonal()), 0.0));
  EXPECT_TRUE(isClose(m.inertias[1].h, Vec3::Zero(), 0.0));
  // Forward dynamics works: the rotor spins about z with its own inertia.
  Data data(m);
  const VecX q = VecX::Zero(2), v = VecX::Zero(2);
  const VecX tau = (VecX(2) << 0.0, 0.003).finished();
  ASSERT_EQ(aba(m, data, q, v, tau), Status::Ok) << data.errorMessage();
  // Rotor torque 0.003 reacts on l1: l1 + rotor about z is 0.025 + 0.0003.
  // M = [[0.0253, 0.0003], [0.0003, 0.0003]]; ddq = M^-1 tau.
  Eigen::Matrix2d M;
  M << 0.0253, 0.0003, 0.0003, 0.0003;
  const Eigen::Vector2d expected = M.inverse() * Eigen::Vector2d(0.0, 0.003);
  EXPECT_TRUE(isClose(data.ddq, expected, 1e-12));
  // Continuous joints are unlimited.
  EXPECT_TRUE(std::isinf(m.lowerPositionLimit[1]) && m.lowerPositionLimit[1] < 0);
  EXPECT_TRUE(std::isinf(m.upperPositionLimit[1]) && m.upperPositionLimit[1] > 0);
}

TEST(UrdfModels, LimitsAreRead) {
  const std::string text =
      robot("  <link name=\"base\"/>\n" + link("l1") + link("l2") +
            joint("j1", "base", "l1",
                  "    <limit lower=\"-1.5\" upper=\"0.5\" effort=\"30\" velocity=\"7\"/>\n") +
            joint("j2", "l1", "l2", "    <limit lower=\"-0.1\" upper=\"0.2\"/>\n", "prismatic"));
  const Model m = buildTreeModel(parseUrdfString(text));
  EXPECT_EQ(m.lowerPositionLimit[0], -1.5);
  EXPECT_EQ(m.upperPositionLimit[0], 0.5);
  EXPECT_EQ(m.effortLimit[0], 30.0);
  EXPECT_EQ(m.velocityLimit[0], 7.0);
  EXPECT_EQ(m.lowerPositionLimit[1], -0.1);
  EXPECT_EQ(m.upperPositionLimit[1], 0.2);
  EXPECT_TRUE(std::isinf(m.effortLimit[1]));
  EXPECT_TRUE(std::isinf(m.velocityLimit[1]));
  EXPECT_EQ(m.velocityIndex("j2"), 1);
  EXPECT_EQ(m.positionIndex("j1"), 0);
}

TEST(UrdfModels, DefaultsWhenElementsAreOmitted) {
  // No <origin>: identity placement; no <axis>: x axis (URDF default); no <inertial>: no mass.
  const std::string text = robot(
      "  <link name=\"base\"/>\n  <link name=\"l1\"/>\n"
      "  <joint name=\"j1\" type=\"prismatic\">\n    <parent link=\"base\"/>\n"
      "    <child link=\"l1\"/>\n  </joint>\n");
  const UrdfDescription d = parseUrdfString(text);
  ASSERT_EQ(d.joints.size(), 1u);
  EXPECT_TRUE(d.joints[0].independent);
  EXPECT_FALSE(d.joints[0].independentGiven);
  EXPECT_FALSE(d.joints[0].hasLimit);
  const Model m = buildTreeModel(d);
  ASSERT_EQ(m.nbodies, 1);
  EXPECT_EQ(m.name, "test_robot");
  EXPECT_TRUE(isClose(m.joints[0].axis, Vec3::UnitX(), 0.0));
  EXPECT_TRUE(isClose(m.jointPlacement[0].R, Mat3::Identity(), 0.0));
  EXPECT_TRUE(isClose(m.jointPlacement[0].p, Vec3::Zero(), 0.0));
  EXPECT_EQ(m.inertias[0].mass, 0.0);
  EXPECT_TRUE(isClose(m.inertias[0].Io, Mat3::Zero(), 0.0));
  EXPECT_TRUE(std::isinf(m.upperPositionLimit[0]));
  EXPECT_TRUE(isClose(m.gravity, Vec3(0, 0, -9.81), 0.0));
}

TEST(UrdfModels, IndependentAttributeIsRead) {
  const std::string text =
      robot("  <link name=\"base\"/>\n" + link("l1") + link("l2") +
            "  <joint name=\"j1\" type=\"revolute\" independent=\"false\">\n"
            "    <parent link=\"base\"/>\n    <child link=\"l1\"/>\n  </joint>\n"
            "  <joint name=\"j2\" type=\"revolute\" independent=\"1\">\n"
            "    <parent link=\"l1\"/>\n    <child link=\"l2\"/>\n  </joint>\n");
  const UrdfDescription d = parseUrdfString(text);
  ASSERT_EQ(d.joints.size(), 2u);
  EXPECT_FALSE(d.joints[0].independent);
  EXPECT_TRUE(d.joints[0].independentGiven);
  EXPECT_TRUE(d.joints[1].independent);
  EXPECT_TRUE(d.joints[1].independentGiven);
}

TEST(UrdfModels, FloatingBaseOption) {
  const std::string path =
      writeTempFile("floating_option.urdf",
                    robot(link("trunk", 4.0) + link("l1") +
                          joint("j1", "trunk", "l1", "    <origin xyz=\"0 0 -0.2\"/>\n")));
  const Model fixedBase = loadTreeModel(path);
  EXPECT_EQ(fixedBase.nbodies, 1);
  EXPECT_EQ(fixedBase.nv, 1);
  EXPECT_EQ(fixedBase.totalMass(), 1.0);  // the root link is the world
  EXPECT_EQ(fixedBase.frames[fixedBase.frameId("trunk")].body, -1);
  ModelOptions o;
  o.floatingBase = true;
  o.gravity = Vec3(0, -9.81, 0);
  const Model m = loadTreeModel(path, o);
  ASSERT_EQ(m.nbodies, 2);
  EXPECT_EQ(m.nq, 8);
  EXPECT_EQ(m.nv, 7);
  EXPECT_EQ(m.joints[0].type, JointType::Floating);
  EXPECT_EQ(m.bodyNames[0], "trunk");
  EXPECT_EQ(m.parent[0], -1);
  EXPECT_EQ(m.parent[1], 0);
  EXPECT_EQ(m.rootLink, "trunk");
  EXPECT_DOUBLE_EQ(m.inertias[0].mass, 4.0);
  EXPECT_DOUBLE_EQ(m.totalMass(), 5.0);
  EXPECT_TRUE(isClose(m.gravity, Vec3(0, -9.81, 0), 0.0));
  const Frame& trunk = m.frames[m.frameId("trunk")];
  EXPECT_EQ(trunk.body, 0);
  EXPECT_TRUE(trunk.isBody);
  EXPECT_TRUE(isClose(m.jointPlacement[1].p, Vec3(0, 0, -0.2), 0.0));
  // Free fall: with no torque the whole body accelerates with gravity (body coordinates).
  Data data(m);
  const VecX q = neutralConfiguration(m);
  ASSERT_EQ(aba(m, data, q, VecX::Zero(m.nv), VecX::Zero(m.nv)), Status::Ok);
  EXPECT_TRUE(isClose(data.ddq, (VecX(7) << 0, 0, 0, 0, -9.81, 0, 0).finished(), 1e-12));
}

// The joint type is an enum from the parser on: URDF continuous is a Revolute joint with
// `continuous` set (its <limit> bounds ignored), a loop of type continuous a Revolute loop, and
// an unknown type is refused with its spelling.
TEST(UrdfParser, JointTypesAreEnums) {
  const std::string lim = "    <limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/>\n";
  const UrdfDescription d = parseUrdfString(
      robot("  <link name=\"base\"/>\n" + link("l1") + link("l2") + link("l3") +
            joint("j1", "base", "l1", lim, "continuous") + joint("j2", "l1", "l2", lim) +
            joint("j3", "l2", "l3", "", "spherical") +
            "  <loop name=\"c\" type=\"continuous\">\n    <predecessor link=\"base\"/>\n"
            "    <successor link=\"l3\"/>\n    <axis xyz=\"0 0 1\"/>\n  </loop>\n"));
  ASSERT_EQ(d.joints.size(), 3u);
  EXPECT_EQ(d.joints[0].type, JointType::Revolute);
  EXPECT_TRUE(d.joints[0].continuous);
  EXPECT_EQ(d.joints[1].type, JointType::Revolute);
  EXPECT_FALSE(d.joints[1].continuous);
  EXPECT_EQ(d.joints[2].type, JointType::Spherical);
  ASSERT_EQ(d.loops.size(), 1u);
  EXPECT_EQ(d.loops[0].type, JointType::Revolute);
  const Model m = buildTreeModel(d);
  EXPECT_EQ(m.lowerPositionLimit[0], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(m.lowerPositionLimit[1], -1.0);
  for (const char* bad : {"hinge", "Revolute", "continuous2"}) {
    std::string path;
    const std::string msg = loadError(
        "badtype.urdf",
        robot("  <link name=\"base\"/>\n" + link("l1") + joint("j1", "base", "l1", "", bad)),
        &path);
    EXPECT_NE(msg.find("unknown joint type '" + std::string(bad) + "'"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace clusterdyn::test
