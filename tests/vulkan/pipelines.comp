#version 450
// Work with no resources: a pipeline is all the test needs.
layout(local_size_x = 1) in;
void main()
{
}
