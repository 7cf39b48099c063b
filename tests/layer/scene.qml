// SPDX-License-Identifier: MIT
// A Qt Quick scene for tests/cli/layer-corpus.sh: a rotating rectangle with a
// gradient and text, drawn every frame by Qt's scene graph.
import QtQuick
Window {
    width: 320; height: 240; visible: true; color: "#203040"
    Rectangle {
        width: 120; height: 120; anchors.centerIn: parent; radius: 20
        gradient: Gradient {
            GradientStop { position: 0; color: "orange" }
            GradientStop { position: 1; color: "purple" }
        }
        RotationAnimation on rotation { from: 0; to: 360; duration: 2000; loops: Animation.Infinite }
        Text { anchors.centerIn: parent; text: "crumbs"; font.pixelSize: 24; color: "white" }
    }
}
