#version 450
// One colour, chosen by a specialization constant.
layout(constant_id = 0) const float shade = 1.0;
layout(location = 0) out vec4 color;
void main()
{
	color = vec4(shade, 0.0, 0.0, 1.0);
}
